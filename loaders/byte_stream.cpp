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

Compression compression_of(const unsigned char* magic, size_t n) noexcept {
  if (n >= 2 && magic[0] == 0x1f && magic[1] == 0x8b) return Compression::Gzip;
  if (n >= 4 && magic[0] == 0x28 && magic[1] == 0xb5 && magic[2] == 0x2f && magic[3] == 0xfd) return Compression::Zstd;
  // a skippable frame first (0x184D2A5?, little-endian): pzstd writes one before its frames (it was read as
  // plain text: "malformed JSON"); libzstd's decoder skips it
  if (n >= 4 && (magic[0] & 0xf0) == 0x50 && magic[1] == 0x2a && magic[2] == 0x4d && magic[3] == 0x18)
    return Compression::Zstd;
  return Compression::None;
}

namespace {
constexpr size_t kInBytes = size_t{1} << 18;  // compressed (or plain) bytes read from the file at a time
}  // namespace

// The decoders' state: zlib's inflate (gzip, members one after another as gunzip reads them) or libzstd's
// streaming decoder; plain bytes need neither.
struct ByteStream::Decoder {
  z_stream gz{};
  bool gz_open = false;
  bool gz_member_ended = false;  // the last inflate call ended a member (the data may end there)
  ZSTD_DCtx* zstd = nullptr;
  size_t zstd_pending = 0;  // the last ZSTD_decompressStream result that moved data: 0 when a frame ended there
  ~Decoder() {
    if (gz_open) inflateEnd(&gz);
    if (zstd != nullptr) ZSTD_freeDCtx(zstd);
  }
};

ByteStream::ByteStream(std::string path) : path_(std::move(path)), dec_(std::make_unique<Decoder>()) {
  file_.reset(std::fopen(path_.c_str(), "rb"));
  if (file_ == nullptr) throw LoadError(path_, 0, "", std::string("cannot open: ") + std::strerror(errno));
  in_.resize(kInBytes);
  // The magic number is read from the stream that is then decoded, not from a second opening: a pipe
  // (`--log <(zcat ...)`, a FIFO) gives its bytes once.
  while (end_ < 4 && fill(0)) {}
  compression_ = compression_of(reinterpret_cast<const unsigned char*>(in_.data()), end_);
  if (compression_ == Compression::Zstd) {
    dec_->zstd = ZSTD_createDCtx();
    if (dec_->zstd == nullptr) throw LoadError(path_, 0, "", "out of memory for the zstd decoder");
  } else if (compression_ == Compression::Gzip) {
    if (inflateInit2(&dec_->gz, 16 + MAX_WBITS) != Z_OK)
      throw LoadError(path_, 0, "", "out of memory for the gzip decoder");
    dec_->gz_open = true;
  }
}

ByteStream::~ByteStream() = default;

bool ByteStream::fill(size_t line) {
  if (eof_) return false;
  if (at_ == end_) at_ = end_ = 0;
  if (end_ == in_.size()) {  // the buffer's end reached: what is left of it moves to the front
    if (at_ == 0) return true;
    std::memmove(in_.data(), in_.data() + at_, end_ - at_);
    end_ -= at_;
    at_ = 0;
  }
  const size_t got = read_file(in_.data() + end_, in_.size() - end_, line);
  end_ += got;
  return got != 0;
}

size_t ByteStream::read_file(char* to, size_t n, size_t line) {
  const size_t got = std::fread(to, 1, n, file_.get());
  if (got == 0 && std::ferror(file_.get()))
    throw LoadError(path_, line, "", std::string("read error: ") + std::strerror(errno));
  if (got == 0) eof_ = true;
  return got;
}

size_t ByteStream::read(char* out, size_t n, size_t line) {
  switch (compression_) {
    case Compression::None: {
      if (at_ == end_ && n >= in_.size() && !eof_) return read_file(out, n, line);  // large: straight into out
      if (at_ == end_ && !fill(line)) return 0;
      const size_t k = std::min(n, end_ - at_);
      std::memcpy(out, in_.data() + at_, k);
      at_ += k;
      return k;
    }
    case Compression::Gzip: return read_gzip(out, n, line);
    case Compression::Zstd: return read_zstd(out, n, line);
  }
  return 0;
}

size_t ByteStream::read_gzip(char* out, size_t n, size_t line) {
  z_stream& z = dec_->gz;
  size_t done = 0;
  while (done < n) {
    if (at_ == end_ && !fill(line)) {  // nothing more to come: the data must end with a whole member
      if (!dec_->gz_member_ended) throw LoadError(path_, line, "", "corrupt or truncated gzip data");
      break;
    }
    if (dec_->gz_member_ended) {  // another member follows (gzip -c a b, pigz): one stream, as gunzip reads it
      if (end_ - at_ < 2) fill(line);
      if (end_ - at_ < 2 || static_cast<unsigned char>(in_[at_]) != 0x1f ||
          static_cast<unsigned char>(in_[at_ + 1]) != 0x8b) {
        eof_ = true;  // bytes after the last member that are no gzip member: ignored, as zlib's gzread and gunzip do
        at_ = end_;
        break;
      }
      if (inflateReset(&z) != Z_OK) throw LoadError(path_, line, "", "corrupt gzip data");
      dec_->gz_member_ended = false;
    }
    z.next_in = reinterpret_cast<Bytef*>(in_.data() + at_);
    z.avail_in = static_cast<uInt>(end_ - at_);
    z.next_out = reinterpret_cast<Bytef*>(out + done);
    z.avail_out = static_cast<uInt>(std::min<size_t>(n - done, size_t{1} << 30));
    const uInt out_before = z.avail_out;
    const int r = inflate(&z, Z_NO_FLUSH);
    at_ = end_ - z.avail_in;
    done += out_before - z.avail_out;
    if (r == Z_STREAM_END) dec_->gz_member_ended = true;
    else if (r == Z_BUF_ERROR && z.avail_in == 0) continue;  // wants more input
    else if (r != Z_OK)
      throw LoadError(path_, line, "", std::string("corrupt gzip data: ") + (z.msg ? z.msg : "inflate failed"));
    if (done > 0 && at_ == end_) break;  // hand out what is decoded before waiting on the file again
  }
  return done;
}

size_t ByteStream::read_zstd(char* out, size_t n, size_t line) {
  Decoder& d = *dec_;
  ZSTD_outBuffer o{out, n, 0};
  while (o.pos < o.size) {
    if (at_ == end_) fill(line);  // the decoder has used its input: more, if there is
    ZSTD_inBuffer in{in_.data(), end_, at_};
    const size_t out_before = o.pos, in_before = in.pos;
    const size_t r = ZSTD_decompressStream(d.zstd, &o, &in);  // (with no input it flushes what it holds)
    at_ = in.pos;
    if (ZSTD_isError(r)) throw LoadError(path_, line, "", std::string("corrupt zstd data: ") + ZSTD_getErrorName(r));
    if (o.pos != out_before || in.pos != in_before) d.zstd_pending = r;  // 0: a frame ended there
    else if (eof_) {  // nothing more to come: the data must end with a frame
      if (d.zstd_pending != 0) throw LoadError(path_, line, "", "corrupt or truncated zstd data");
      break;
    }
  }
  return o.pos;
}

}  // namespace colmatch::loaders
