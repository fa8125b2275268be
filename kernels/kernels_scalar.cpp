// Scalar twins of every kernel: the reference each SIMD variant is tested against, and the
// baseline for machines without SSE2 (non-x86). Built with -fno-tree-vectorize so that the
// benchmarks compare SIMD code with plain row-at-a-time code, not with the auto-vectorizer.
#include "kernels/dassert.hpp"
#include "kernels/kernels.hpp"
#include "kernels/kernels_table.hpp"
#include "kernels/relop.hpp"

namespace colmatch::kernels {
namespace {

template <class Pred>
inline void fill_mask(size_t n, uint64_t* out, Pred pred) noexcept {
  const size_t nw = words_for(n);
  for (size_t w = 0; w < nw; ++w) {
    uint64_t word = 0;
    const size_t base = w * 64;
    const size_t end = base + 64 < n ? base + 64 : n;
    for (size_t i = base; i < end; ++i) word |= uint64_t{pred(i)} << (i - base);
    out[w] = word;
  }
}

void cmp_f64(const double* col, size_t n, CmpOp op, double v, uint64_t* out) noexcept {
  with_relop(op, [&](auto cmp) { fill_mask(n, out, [&](size_t i) { return cmp(col[i], v); }); });
}

void cmp2_f64(const double* a, const uint64_t* aa, const double* b, const uint64_t* ba, size_t n, CmpOp op, double v,
              uint64_t* out) noexcept {
  auto bit = [](const uint64_t* w, size_t i) { return ((w[i >> 6] >> (i & 63)) & 1) != 0; };
  with_relop(op, [&](auto cmp) {
    fill_mask(n, out, [&](size_t i) { return (cmp(a[i], v) || bit(aa, i)) && (cmp(b[i], v) || bit(ba, i)); });
  });
}

void eq_u32(const uint32_t* ids, size_t n, uint32_t id, uint64_t* out) noexcept {
  fill_mask(n, out, [&](size_t i) { return ids[i] == id; });
}

void lut_u32(const uint32_t* ids, size_t n, const uint32_t* lut, size_t lut_size, uint64_t* out) noexcept {
  COLMATCH_DASSERT_ALL_BELOW(ids, n, lut_size, "lut_u32: a dictionary id past the lookup table");
  fill_mask(n, out, [&](size_t i) { return lut[ids[i]] != 0; });
}

void bits32_u32(const uint32_t* ids, size_t n, uint32_t bits, uint64_t* out) noexcept {
  COLMATCH_DASSERT_ALL_BELOW(ids, n, 32u, "bits32_u32: an id of 32 or more");
  fill_mask(n, out, [&](size_t i) { return ((bits >> ids[i]) & 1u) != 0; });
}

void and_words(uint64_t* dst, const uint64_t* src, size_t nw) noexcept {
  for (size_t w = 0; w < nw; ++w) dst[w] &= src[w];
}
void or_words(uint64_t* dst, const uint64_t* src, size_t nw) noexcept {
  for (size_t w = 0; w < nw; ++w) dst[w] |= src[w];
}
void andnot_words(uint64_t* dst, const uint64_t* src, size_t nw) noexcept {
  for (size_t w = 0; w < nw; ++w) dst[w] &= ~src[w];
}
uint64_t popcount(const uint64_t* words, size_t nw) noexcept {
  uint64_t c = 0;
  for (size_t w = 0; w < nw; ++w) {
    uint64_t x = words[w];  // portable bit count, no popcnt instruction assumed
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    c += (x * 0x0101010101010101ULL) >> 56;
  }
  return c;
}

}  // namespace

const KernelTable kScalarTable{Isa::Scalar, cmp_f64,   eq_u32,   lut_u32,      bits32_u32,
                               cmp2_f64,    and_words, or_words, andnot_words, popcount};

}  // namespace colmatch::kernels
