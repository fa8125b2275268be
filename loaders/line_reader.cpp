#include "loaders/line_reader.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include <zlib.h>

#include <algorithm>

#include <tbb/parallel_for.h>

#include <fmt/format.h>

#include "loaders/errors.hpp"

namespace colmatch::loaders {

void require_not_directory(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw LoadError(path, 0, "", "is a folder, not a file");
}

LineReader::LineReader(std::string path, ProgressFn progress)
    : path_(std::move(path)), buf_(1 << 20), progress_(std::move(progress)) {
  require_not_directory(path_);
  gz_ = gzopen(path_.c_str(), "rb");
  if (gz_ == nullptr) throw LoadError(path_, 0, "", std::string("cannot open: ") + std::strerror(errno));
  gzbuffer(static_cast<gzFile>(gz_), 1 << 18);
}

LineReader::~LineReader() {
  if (gz_ != nullptr) gzclose(static_cast<gzFile>(gz_));
}

bool LineReader::refill() {
  if (eof_) return false;
  const int n = gzread(static_cast<gzFile>(gz_), buf_.data(), static_cast<unsigned>(buf_.size()));
  if (n < 0) {
    int err = 0;
    const char* msg = gzerror(static_cast<gzFile>(gz_), &err);
    throw LoadError(path_, line_ + 1, "", std::string("read error: ") + msg);
  }
  if (n == 0) {
    int err = 0;
    gzerror(static_cast<gzFile>(gz_), &err);
    if (err != Z_OK && err != Z_STREAM_END) throw LoadError(path_, line_ + 1, "", "corrupt or truncated gzip data");
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
// is read: a truncated mapping faults), or nothing: a gzip file, a pipe, an empty
// file or a failed map are read in blocks instead.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st {};
    unsigned char magic[2] = {0, 0};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        !(::pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b)) {
      void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
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
size_t hand_out(const std::string& path, std::string_view text, size_t readable, size_t lines, size_t piece_bytes,
                size_t& piece_index, const std::function<void(const LinePiece&)>& fn) {
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
        for (size_t i = r.begin(); i < r.end(); ++i) fn(pieces[i]);
      },
      tbb::simple_partitioner());
  return lines - before;
}

}  // namespace

void for_each_line_piece(const std::string& path, const ProgressFn& progress,
                         const std::function<void(const LinePiece&)>& fn, size_t block_bytes, size_t piece_bytes) {
  require_not_directory(path);
  piece_bytes = std::max<size_t>(piece_bytes, 1);
  size_t piece_index = 0;
  if (const MappedFile file(path); file.data() != nullptr) {  // all of it at once
    if (progress) progress(path, 0, file.size());
    hand_out(path, std::string_view(file.data(), file.size()), file.size(), 0, piece_bytes, piece_index, fn);
    return;
  }
  gzFile gz = gzopen(path.c_str(), "rb");
  if (gz == nullptr) throw LoadError(path, 0, "", std::string("cannot open: ") + std::strerror(errno));
  struct Closer {
    gzFile gz;
    ~Closer() { gzclose(gz); }
  } closer{gz};
  gzbuffer(gz, 1 << 18);
  block_bytes = std::clamp<size_t>(block_bytes, 1, kMaxLineBytes);
  std::vector<char> buf(block_bytes);
  size_t have = 0;   // bytes in buf: the carried part of a line, then what was read
  size_t lines = 0;  // lines before buf
  uint64_t bytes = 0;
  bool eof = false;
  while (!eof || have > 0) {
    if (!eof) {
      if (have == buf.size()) {  // one line fills the block: grow it, up to the longest line allowed
        if (have > kMaxLineBytes)
          throw LoadError(path, lines + 1, "", fmt::format("a line longer than {} bytes", kMaxLineBytes));
        buf.resize(std::min(2 * buf.size(), kMaxLineBytes + 2));
      }
      const size_t want = std::min<size_t>(buf.size() - have, size_t{1} << 30);
      const int n = gzread(gz, buf.data() + have, static_cast<unsigned>(want));
      if (n < 0) {
        int err = 0;
        throw LoadError(path, lines + 1, "", std::string("read error: ") + gzerror(gz, &err));
      }
      if (n == 0) {
        int err = 0;
        gzerror(gz, &err);
        if (err != Z_OK && err != Z_STREAM_END) throw LoadError(path, lines + 1, "", "corrupt or truncated gzip data");
        eof = true;
      }
      have += static_cast<size_t>(n);
      bytes += static_cast<uint64_t>(n);
      if (progress) progress(path, lines, bytes);
    }
    // The whole lines in buf: up to the last '\n', or everything at the end of the file.
    size_t cut = have;
    if (!eof) {
      const void* last = ::memrchr(buf.data(), '\n', have);
      cut = last == nullptr ? 0 : static_cast<size_t>(static_cast<const char*>(last) - buf.data()) + 1;
      if (cut == 0) {
        if (have > kMaxLineBytes)
          throw LoadError(path, lines + 1, "", fmt::format("a line longer than {} bytes", kMaxLineBytes));
        continue;  // read more of the line
      }
    }
    lines += hand_out(path, std::string_view(buf.data(), cut), buf.size(), lines, piece_bytes, piece_index, fn);
    std::memmove(buf.data(), buf.data() + cut, have - cut);
    have -= cut;
    if (eof) break;
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
