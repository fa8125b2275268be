#include "loaders/line_reader.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include <tbb/parallel_for.h>

#include <fmt/format.h>

#include "loaders/errors.hpp"

namespace colmatch::loaders {

void require_not_directory(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw LoadError(path, 0, "", "is a folder, not a file");
}

namespace {
thread_local const ProgressFn* t_scope = nullptr;  // the innermost ProgressScope of this thread
}  // namespace

ProgressScope::ProgressScope(const ProgressFn& progress) noexcept : previous_(t_scope) { t_scope = &progress; }
ProgressScope::~ProgressScope() { t_scope = previous_; }

LineReader::LineReader(std::string path, ProgressFn progress)
    : path_(std::move(path)), buf_(1 << 20), progress_(std::move(progress)) {
  if (!progress_ && t_scope != nullptr && *t_scope) progress_ = *t_scope;
  require_not_directory(path_);
  in_ = std::make_unique<ByteStream>(path_);
}

LineReader::~LineReader() = default;

bool LineReader::refill() {
  if (eof_) return false;
  const size_t n = in_->read(buf_.data(), buf_.size(), line_ + 1);
  if (n == 0) {
    eof_ = true;
    return false;
  }
  begin_ = 0;
  end_ = static_cast<size_t>(n);
  bytes_ += static_cast<uint64_t>(n);
  if (progress_) progress_(path_, line_, bytes_);
  return true;
}

namespace {
// A UTF-8 byte-order mark at the start of a file (editors on Windows write one) is not part of the data.
void strip_bom(std::string_view& line) {
  if (line.size() >= 3 && line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);
}
}  // namespace

bool LineReader::next(std::string_view& out) {
  carry_.clear();
  while (true) {
    if (begin_ == end_ && !refill()) {
      if (carry_.empty()) return false;
      ++line_;  // the last line, without a final '\n'
      out = carry_;
      if (line_ == 1) strip_bom(out);
      if (out.back() == '\r') out.remove_suffix(1);
      return true;
    }
    const char* start = buf_.data() + begin_;
    const void* nl = std::memchr(start, '\n', end_ - begin_);
    if (nl == nullptr) {
      carry_.append(start, end_ - begin_);
      if (carry_.size() > kMaxLineBytes)  // one line may not take the memory of the whole run
        throw LoadError(path_, line_ + 1, "", fmt::format("a line longer than {} bytes", kMaxLineBytes));
      begin_ = end_;
      continue;
    }
    const size_t len = static_cast<size_t>(static_cast<const char*>(nl) - start);
    begin_ += len + 1;
    ++line_;
    if (carry_.empty()) {
      out = std::string_view(start, len);
    } else {
      carry_.append(start, len);
      if (carry_.size() > kMaxLineBytes)
        throw LoadError(path_, line_, "", fmt::format("a line longer than {} bytes", kMaxLineBytes));
      out = carry_;
    }
    if (line_ == 1) strip_bom(out);
    if (!out.empty() && out.back() == '\r') out.remove_suffix(1);
    return true;
  }
}

bool PieceLines::next(std::string_view& out) {
  if (rest_.empty()) return false;
  const size_t nl = rest_.find('\n');
  out = rest_.substr(0, nl);
  rest_.remove_prefix(nl == std::string_view::npos ? rest_.size() : nl + 1);
  if (++line_ == 1) strip_bom(out);
  if (!out.empty() && out.back() == '\r') out.remove_suffix(1);
  return true;
}

namespace {

// A plain regular file mapped whole (MAP_PRIVATE, read only; an input is not expected to shrink while it
// is read: a truncated mapping faults), or nothing: a gzip or zstd file, a pipe, an empty
// file or a failed map are read in blocks instead.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    // a FIFO is not opened here: opened and closed with no other reader, its writer would die of SIGPIPE
    struct stat named {};
    if (::stat(path.c_str(), &named) != 0 || !S_ISREG(named.st_mode)) return;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st {};
    unsigned char magic[4] = {0, 0, 0, 0};
    const ssize_t n = ::pread(fd, magic, sizeof magic, 0);
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        compression_of(magic, n > 0 ? static_cast<size_t>(n) : 0) == Compression::None) {
      // not populated: a window's pages come in as it is read and are dropped after (for_each_line_piece)
      void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (p != MAP_FAILED) {
        data_ = static_cast<const char*>(p);
        size_ = static_cast<size_t>(st.st_size);
      }
    }
    ::close(fd);
  }
  ~MappedFile() {
    if (data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const char* data() const noexcept { return data_; }
  size_t size() const noexcept { return size_; }

 private:
  const char* data_ = nullptr;
  size_t size_ = 0;
};

// Hands out text (whole lines, the first of them line lines + 1 of the file): cut into pieces of about
// piece_bytes after a '\n', each piece counting its lines and finding its first line longer than
// kMaxLineBytes (the bound LineReader keeps; a line's bytes without its '\n'), then fn on every piece
// in parallel. `readable` >= text.size() bytes from text.data() may be read. Returns the lines handed out.
// Drops the whole pages of a mapped file's text (MADV_DONTNEED: read again, a page comes back from the page
// cache), so that the file is not resident whole beside what is built from it.
void drop(std::string_view text) {
  static const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t a = (reinterpret_cast<uintptr_t>(text.data()) + page - 1) / page * page;
  const uintptr_t b = (reinterpret_cast<uintptr_t>(text.data()) + text.size()) / page * page;
  if (a < b) ::madvise(reinterpret_cast<void*>(a), b - a, MADV_DONTNEED);
}

size_t hand_out(const std::string& path, std::string_view text, size_t readable, size_t lines, size_t piece_bytes,
                size_t& piece_index, const std::function<void(const LinePiece&)>& fn, bool mapped = false) {
  std::vector<LinePiece> pieces;
  for (size_t at = 0; at < text.size();) {
    size_t end = std::min(text.size(), at + piece_bytes);
    if (end < text.size()) {
      const size_t nl = text.find('\n', end);
      end = nl == std::string_view::npos ? text.size() : nl + 1;
    }
    pieces.push_back({text.substr(at, end - at), 0, piece_index++, readable - end});
    at = end;
  }
  std::vector<size_t> count(pieces.size()), too_long(pieces.size(), SIZE_MAX);  // line within the piece
  tbb::parallel_for(size_t{0}, pieces.size(), [&](size_t i) {
    std::string_view rest = pieces[i].text;
    size_t n = 0;
    while (!rest.empty()) {
      const size_t nl = rest.find('\n');
      const size_t len = nl == std::string_view::npos ? rest.size() : nl;
      if (len > kMaxLineBytes && too_long[i] == SIZE_MAX) too_long[i] = n;
      ++n;
      rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
    }
    count[i] = n;
  });
  const size_t before = lines;
  for (size_t i = 0; i < pieces.size(); ++i) {
    pieces[i].first_line = lines + 1;
    if (too_long[i] != SIZE_MAX)
      throw LoadError(path, lines + too_long[i] + 1, "", fmt::format("a line longer than {} bytes", kMaxLineBytes));
    lines += count[i];
  }
  tbb::parallel_for(
      tbb::blocked_range<size_t>(0, pieces.size(), 1),
      [&](const tbb::blocked_range<size_t>& r) {
        for (size_t i = r.begin(); i < r.end(); ++i) {
          fn(pieces[i]);
          if (mapped) drop(pieces[i].text);  // a later read of its bytes (padding) brings them back
        }
      },
      tbb::simple_partitioner());
  return lines - before;
}

// Reads a zstd, gzip (or plain) stream in blocks of whole lines on a thread of its own, one block ahead of the
// caller: next() gives the blocks in order (nullptr after the last), done() hands a block back to be
// filled again. Two blocks in all: memory stays two blocks (each at most the longest line allowed, twice).
// A read error, corrupt data or a line longer than kMaxLineBytes is thrown by next() when the caller
// reaches the block it is in, naming the file and the line; the destructor stops and joins the thread.
class BlockReader {
 public:
  struct Block {
    std::vector<char> data;  // whole lines in [0, size); the bytes after them may be read (padding)
    size_t size = 0;
    uint64_t bytes = 0;  // bytes of the file read by the end of this block
    bool last = false;
  };

  BlockReader(const std::string& path, ByteStream& in, size_t block_bytes) : path_(path), in_(in) {
    for (Block& b : blocks_) b.data.resize(block_bytes);
    free_ = {&blocks_[0], &blocks_[1]};
    thread_ = std::thread([this] { run(); });
  }
  ~BlockReader() {
    {
      const std::lock_guard<std::mutex> hold(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  BlockReader(const BlockReader&) = delete;
  BlockReader& operator=(const BlockReader&) = delete;

  Block* next() {
    std::unique_lock<std::mutex> hold(mutex_);
    changed_.wait(hold, [&] { return !full_.empty() || error_ || finished_; });
    if (!full_.empty()) {
      Block* b = full_.front();
      full_.erase(full_.begin());
      return b;
    }
    if (error_) std::rethrow_exception(error_);
    return nullptr;
  }
  void done(Block* b) {
    {
      const std::lock_guard<std::mutex> hold(mutex_);
      free_.push_back(b);
    }
    changed_.notify_all();
  }

 private:
  // Takes a free block, or nullptr when stopped.
  Block* take_free() {
    std::unique_lock<std::mutex> hold(mutex_);
    changed_.wait(hold, [&] { return !free_.empty() || stop_; });
    if (stop_) return nullptr;
    Block* b = free_.back();
    free_.pop_back();
    return b;
  }
  void give(Block* b) {
    {
      const std::lock_guard<std::mutex> hold(mutex_);
      full_.push_back(b);
    }
    changed_.notify_all();
  }
  void run() {
    try {
      read_all();
    } catch (...) {
      const std::lock_guard<std::mutex> hold(mutex_);
      error_ = std::current_exception();
    }
    {
      const std::lock_guard<std::mutex> hold(mutex_);
      finished_ = true;
    }
    changed_.notify_all();
  }
  void read_all() {
    std::vector<char> carry;  // the start of a line the last block ended inside
    size_t lines = 0;         // lines before the block being filled
    uint64_t bytes = 0;
    bool eof = false;
    while (!eof) {
      Block* b = take_free();
      if (b == nullptr) return;
      std::vector<char>& buf = b->data;
      if (buf.size() < carry.size() + 1) buf.resize(std::min(2 * carry.size() + 1, kMaxLineBytes + 2));
      std::copy(carry.begin(), carry.end(), buf.begin());
      size_t have = carry.size(), cut = 0;
      while (true) {
        if (have == buf.size()) {  // one line fills the block: grow it, up to the longest line allowed
          if (have > kMaxLineBytes)
            throw LoadError(path_, lines + 1, "", fmt::format("a line longer than {} bytes", kMaxLineBytes));
          buf.resize(std::min(2 * buf.size(), kMaxLineBytes + 2));
        }
        const size_t n = in_.read(buf.data() + have, buf.size() - have, lines + 1);
        if (n == 0) eof = true;
        have += n;
        bytes += n;
        if (eof) {
          cut = have;
          break;
        }
        const void* last = ::memrchr(buf.data(), '\n', have);
        cut = last == nullptr ? 0 : static_cast<size_t>(static_cast<const char*>(last) - buf.data()) + 1;
        if (cut > 0 && have == buf.size()) break;  // a full block of whole lines
        if (cut == 0 && have > kMaxLineBytes)
          throw LoadError(path_, lines + 1, "", fmt::format("a line longer than {} bytes", kMaxLineBytes));
      }
      carry.assign(buf.begin() + static_cast<std::ptrdiff_t>(cut), buf.begin() + static_cast<std::ptrdiff_t>(have));
      lines += static_cast<size_t>(std::count(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(cut), '\n'));
      b->size = cut;
      b->bytes = bytes;
      b->last = eof;
      give(b);
    }
  }

  const std::string& path_;
  ByteStream& in_;
  std::array<Block, 2> blocks_;
  std::vector<Block*> free_, full_;
  std::exception_ptr error_;
  bool stop_ = false, finished_ = false;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::thread thread_;
};

}  // namespace

void for_each_line_piece(const std::string& path, const ProgressFn& progress,
                         const std::function<void(const LinePiece&)>& fn, size_t block_bytes, size_t piece_bytes) {
  require_not_directory(path);
  piece_bytes = std::max<size_t>(piece_bytes, 1);
  size_t piece_index = 0;
  if (const MappedFile file(path); file.data() != nullptr) {
    // In windows of whole lines (64 pieces, at least a block): a window's lines are counted, its pieces
    // handed out and its pages dropped before the next, so the file is resident a window at a time (a
    // 2.4 GB jobs file: 1.9 GB peak instead of 3.0 GB, in the same time).
    const std::string_view all(file.data(), file.size());
    const size_t window = std::max(block_bytes, 64 * piece_bytes);
    size_t lines = 0;
    for (size_t at = 0; at < all.size();) {
      size_t end = std::min(all.size(), at + window);
      if (end < all.size()) {
        const size_t nl = all.find('\n', end - 1);
        end = nl == std::string_view::npos ? all.size() : nl + 1;
      }
      if (progress) progress(path, lines, end);
      lines += hand_out(path, all.substr(at, end - at), all.size() - at, lines, piece_bytes, piece_index, fn,
                        /*mapped=*/true);
      at = end;
    }
    return;
  }
  ByteStream in(path);
  // A thread of its own decompresses the next block while this one's pieces are parsed (zlib and zstd
  // decode one stream: issue 29), two blocks in turn: the reader fills one while the other is handed out.
  BlockReader reader(path, in, std::clamp<size_t>(block_bytes, 1, kMaxLineBytes));
  size_t lines = 0;  // lines before the block
  while (BlockReader::Block* block = reader.next()) {
    if (progress) progress(path, lines, block->bytes);
    lines += hand_out(path, std::string_view(block->data.data(), block->size), block->data.size(), lines, piece_bytes,
                      piece_index, fn);
    reader.done(block);
  }
}

void split_csv(std::string_view line, std::vector<std::string_view>& fields) {
  fields.clear();
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    if (comma == std::string_view::npos) {
      fields.push_back(line.substr(start));
      return;
    }
    fields.push_back(line.substr(start, comma - start));
    start = comma + 1;
  }
}

}  // namespace colmatch::loaders
