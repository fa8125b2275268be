#include "loaders/byte_stream.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include <zlib.h>
#include <zstd.h>

#include "loaders/errors.hpp"

namespace colmatch::loaders {

Compression compression_of(const std::string& path) noexcept {
  unsigned char magic[4] = {0, 0, 0, 0};
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return Compression::None;
  const size_t n = std::fread(magic, 1, 4, f);
  std::fclose(f);
  if (n >= 2 && magic[0] == 0x1f && magic[1] == 0x8b) return Compression::Gzip;
  if (n == 4 && magic[0] == 0x28 && magic[1] == 0xb5 && magic[2] == 0x2f && magic[3] == 0xfd) return Compression::Zstd;
  // a skippable frame first (0x184D2A5?, little-endian): pzstd writes one before its frames (it was read as
  // plain text: "malformed JSON"); libzstd's decoder skips it
  if (n == 4 && (magic[0] & 0xf0) == 0x50 && magic[1] == 0x2a && magic[2] == 0x4d && magic[3] == 0x18)
    return Compression::Zstd;
  return Compression::None;
}

// libzstd's streaming decoder over the file: compressed bytes in `in`, read as the decoder asks.
struct ByteStream::Zstd {
  std::FILE* file = nullptr;
  ZSTD_DCtx* dctx = nullptr;
  std::vector<char> in;
  ZSTD_inBuffer pos{nullptr, 0, 0};
  size_t pending = 0;  // the last ZSTD_decompressStream result that moved data: 0 when a frame ended there
  bool eof = false;
  ~Zstd() {
    if (dctx != nullptr) ZSTD_freeDCtx(dctx);
    if (file != nullptr) std::fclose(file);
  }
};

ByteStream::ByteStream(std::string path) : path_(std::move(path)) {
  if (compression_of(path_) == Compression::Zstd) {
    zstd_ = std::make_unique<Zstd>();
    zstd_->file = std::fopen(path_.c_str(), "rb");
    if (zstd_->file == nullptr) throw LoadError(path_, 0, "", std::string("cannot open: ") + std::strerror(errno));
    zstd_->dctx = ZSTD_createDCtx();
    if (zstd_->dctx == nullptr) throw LoadError(path_, 0, "", "out of memory for the zstd decoder");
    zstd_->in.resize(ZSTD_DStreamInSize());
    return;
  }
  gz_ = gzopen(path_.c_str(), "rb");
  if (gz_ == nullptr) throw LoadError(path_, 0, "", std::string("cannot open: ") + std::strerror(errno));
  gzbuffer(static_cast<gzFile>(gz_), 1 << 18);
}

ByteStream::~ByteStream() {
  if (gz_ != nullptr) gzclose(static_cast<gzFile>(gz_));
}

size_t ByteStream::read(char* out, size_t n, size_t line) {
  if (zstd_) {
    Zstd& z = *zstd_;
    ZSTD_outBuffer o{out, n, 0};
    while (o.pos < o.size) {
      if (z.pos.pos == z.pos.size && !z.eof) {  // the decoder has used its input: more, if there is
        const size_t got = std::fread(z.in.data(), 1, z.in.size(), z.file);
        if (got == 0 && std::ferror(z.file))
          throw LoadError(path_, line, "", std::string("read error: ") + std::strerror(errno));
        if (got == 0) z.eof = true;
        else z.pos = ZSTD_inBuffer{z.in.data(), got, 0};
      }
      const size_t out_before = o.pos, in_before = z.pos.pos;
      const size_t r = ZSTD_decompressStream(z.dctx, &o, &z.pos);  // (with no input it flushes what it holds)
      if (ZSTD_isError(r)) throw LoadError(path_, line, "", std::string("corrupt zstd data: ") + ZSTD_getErrorName(r));
      if (o.pos != out_before || z.pos.pos != in_before) z.pending = r;  // 0: a frame ended there
      else if (z.eof) {  // nothing more to come: the data must end with a frame
        if (z.pending != 0) throw LoadError(path_, line, "", "corrupt or truncated zstd data");
        break;
      }
    }
    return o.pos;
  }
  const int got = gzread(static_cast<gzFile>(gz_), out, static_cast<unsigned>(std::min<size_t>(n, size_t{1} << 30)));
  if (got < 0) {
    int err = 0;
    throw LoadError(path_, line, "", std::string("read error: ") + gzerror(static_cast<gzFile>(gz_), &err));
  }
  if (got == 0) {
    int err = 0;
    gzerror(static_cast<gzFile>(gz_), &err);
    if (err != Z_OK && err != Z_STREAM_END) throw LoadError(path_, line, "", "corrupt or truncated gzip data");
  }
  return static_cast<size_t>(got);
}

}  // namespace colmatch::loaders
