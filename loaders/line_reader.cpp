#include "loaders/line_reader.hpp"

#include <cstring>
#include <filesystem>

#include <zlib.h>

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
