// A file's bytes as one stream, decompressed by what its first bytes say: zstd (zstd's frame magic
// number, libzstd's streaming decoder), gzip or plain (zlib's gzread, which passes a plain file through).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace colmatch::loaders {

/// The compression a file's first bytes announce.
enum class Compression : uint8_t { None, Gzip, Zstd };

/// The compression of the file at `path` by its magic number (gzip 1f 8b, zstd 28 b5 2f fd); None for a
/// plain file or one that cannot be read (opening it reports that).
Compression compression_of(const std::string& path) noexcept;

/// Reads a file decompressed, in order. Not thread-safe (one reader at a time).
class ByteStream {
 public:
  /// Opens `path`; throws LoadError naming the file if it cannot be opened.
  explicit ByteStream(std::string path);
  ~ByteStream();
  ByteStream(const ByteStream&) = delete;
  ByteStream& operator=(const ByteStream&) = delete;
  /// Up to `n` bytes into `out`: how many, 0 only at the end of the data. Throws LoadError naming the
  /// file and `line` (the caller's line count, 1-based: where the data stopped making sense) on a read
  /// error or corrupt or truncated compressed data.
  size_t read(char* out, size_t n, size_t line);

 private:
  struct Zstd;
  std::string path_;
  void* gz_ = nullptr;          // gzip or plain
  std::unique_ptr<Zstd> zstd_;  // zstd
};

}  // namespace colmatch::loaders
