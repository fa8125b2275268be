// A file's bytes as one stream, decompressed by what its first bytes say: zstd (zstd's frame magic
// number, libzstd's streaming decoder), gzip (zlib's inflate) or plain. The file is opened once and its
// first bytes are kept, so a pipe or FIFO (`--log <(zcat log.gz)`) reads as a file does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace colmatch::loaders {

/// The compression a file's first bytes announce.
enum class Compression : uint8_t { None, Gzip, Zstd };

/// The compression a file's first `n` bytes announce by their magic number (gzip 1f 8b, zstd 28 b5 2f fd or
/// a skippable frame first); None for plain text or fewer bytes than the magic number.
Compression compression_of(const unsigned char* magic, size_t n) noexcept;

/// Reads a file (a regular file, a pipe or a FIFO) decompressed, in order. Not thread-safe (one reader at a
/// time).
class ByteStream {
 public:
  /// Opens `path` and reads its first bytes (the magic number); throws LoadError naming the file if it
  /// cannot be opened or read.
  explicit ByteStream(std::string path);
  ~ByteStream();
  ByteStream(const ByteStream&) = delete;
  ByteStream& operator=(const ByteStream&) = delete;
  /// Up to `n` bytes into `out`: how many, 0 only at the end of the data. Throws LoadError naming the
  /// file and `line` (the caller's line count, 1-based: where the data stopped making sense) on a read
  /// error or corrupt or truncated compressed data.
  size_t read(char* out, size_t n, size_t line);

 private:
  struct Decoder;
  // Reads more of the file into in_ after end_ (at_ == end_: from its start); false at the end of the file.
  bool fill(size_t line);
  // Up to n bytes of the file into `to` (0 at its end, eof_ then set); throws LoadError on a read error.
  size_t read_file(char* to, size_t n, size_t line);
  size_t read_gzip(char* out, size_t n, size_t line);
  size_t read_zstd(char* out, size_t n, size_t line);
  std::string path_;
  struct Close {
    void operator()(std::FILE* f) const noexcept { std::fclose(f); }
  };
  std::unique_ptr<std::FILE, Close> file_;
  std::vector<char> in_;  // the file's bytes not yet decoded: [at_, end_)
  size_t at_ = 0, end_ = 0;
  bool eof_ = false;
  Compression compression_ = Compression::None;
  std::unique_ptr<Decoder> dec_;
};

}  // namespace colmatch::loaders
