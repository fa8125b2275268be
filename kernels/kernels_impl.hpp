// Internal: the kernels as templates over an xsimd architecture `A`. Included only by
// kernels_<isa>.cpp, each compiled with that instruction set's flags, so every instantiation lives
// in a translation unit allowed to use it; everything here has internal linkage for the same reason
// (no inline function compiled for AVX-512 can be picked by the linker for baseline code).
#pragma once

#include <xsimd/xsimd.hpp>

#include "kernels/dassert.hpp"
#include "kernels/kernels.hpp"
#include "kernels/relop.hpp"

namespace colmatch::kernels {
namespace {

// --- batch_bool -> lane bits (xsimd 8.1 has no batch_bool::mask()) ------------------------------
inline uint64_t lane_bits(xsimd::batch_bool<double, xsimd::sse2> b) noexcept {
  return static_cast<uint64_t>(_mm_movemask_pd(b));
}
inline uint64_t lane_bits(xsimd::batch_bool<uint32_t, xsimd::sse2> b) noexcept {
  return static_cast<uint64_t>(_mm_movemask_ps(_mm_castsi128_ps(b)));
}
#if defined(__AVX2__)
inline uint64_t lane_bits(xsimd::batch_bool<double, xsimd::avx2> b) noexcept {
  return static_cast<uint64_t>(_mm256_movemask_pd(b));
}
inline uint64_t lane_bits(xsimd::batch_bool<uint32_t, xsimd::avx2> b) noexcept {
  return static_cast<uint64_t>(_mm256_movemask_ps(_mm256_castsi256_ps(b)));
}
#endif
#if defined(__AVX512BW__)
template <class T>
inline uint64_t lane_bits(xsimd::batch_bool<T, xsimd::avx512bw> b) noexcept {
  return static_cast<uint64_t>(b.data);  // __mmask8 / __mmask16: already one bit per lane
}
#endif

// --- comparison of a double column with a scalar ------------------------------------------------
// 64 rows per output word, 64 / lanes loads per word, no branch per row. Tail rows go scalar.
template <class A, class Cmp>
inline void cmp_f64_loop(const double* col, size_t n, double v, uint64_t* out, Cmp cmp) noexcept {
  using B = xsimd::batch<double, A>;
  constexpr size_t L = B::size;
  static_assert(64 % L == 0);
  const B vv(v);
  const size_t full = n / 64;
  for (size_t w = 0; w < full; ++w) {
    const double* p = col + w * 64;
    uint64_t word = 0;
    for (size_t k = 0; k < 64; k += L) word |= lane_bits(cmp(B::load_unaligned(p + k), vv)) << k;
    out[w] = word;
  }
  if (n & 63) {
    uint64_t word = 0;
    for (size_t i = full * 64; i < n; ++i) word |= uint64_t{cmp(col[i], v)} << (i - full * 64);
    out[full] = word;
  }
}

template <class A>
void cmp_f64(const double* col, size_t n, CmpOp op, double v, uint64_t* out) noexcept {
  with_relop(op, [&](auto cmp) { cmp_f64_loop<A>(col, n, v, out, cmp); });
}

template <class A, class Cmp>
inline void cmp2_f64_loop(const double* a, const uint64_t* aa, const double* b, const uint64_t* ba, size_t n, double v,
                          uint64_t* out, Cmp cmp) noexcept {
  using B = xsimd::batch<double, A>;
  constexpr size_t L = B::size;
  const B vv(v);
  const size_t full = n / 64;
  for (size_t w = 0; w < full; ++w) {
    const double* pa = a + w * 64;
    const double* pb = b + w * 64;
    uint64_t wa = 0, wb = 0;
    for (size_t k = 0; k < 64; k += L) {
      wa |= lane_bits(cmp(B::load_unaligned(pa + k), vv)) << k;
      wb |= lane_bits(cmp(B::load_unaligned(pb + k), vv)) << k;
    }
    out[w] = (wa | aa[w]) & (wb | ba[w]);
  }
  if (n & 63) {
    uint64_t wa = 0, wb = 0;
    for (size_t i = full * 64; i < n; ++i) {
      wa |= uint64_t{cmp(a[i], v)} << (i - full * 64);
      wb |= uint64_t{cmp(b[i], v)} << (i - full * 64);
    }
    out[full] = ((wa | aa[full]) & (wb | ba[full])) & ((uint64_t{1} << (n & 63)) - 1);
  }
}

template <class A>
void cmp2_f64(const double* a, const uint64_t* aa, const double* b, const uint64_t* ba, size_t n, CmpOp op, double v,
              uint64_t* out) noexcept {
  with_relop(op, [&](auto cmp) { cmp2_f64_loop<A>(a, aa, b, ba, n, v, out, cmp); });
}

// --- dictionary ids -----------------------------------------------------------------------------
template <class A>
void eq_u32(const uint32_t* ids, size_t n, uint32_t id, uint64_t* out) noexcept {
  using B = xsimd::batch<uint32_t, A>;
  constexpr size_t L = B::size;
  const B vv(id);
  const size_t full = n / 64;
  for (size_t w = 0; w < full; ++w) {
    const uint32_t* p = ids + w * 64;
    uint64_t word = 0;
    for (size_t k = 0; k < 64; k += L) word |= lane_bits(B::load_unaligned(p + k) == vv) << k;
    out[w] = word;
  }
  if (n & 63) {
    uint64_t word = 0;
    for (size_t i = full * 64; i < n; ++i) word |= uint64_t{ids[i] == id} << (i - full * 64);
    out[full] = word;
  }
}

template <class A>
void lut_u32(const uint32_t* ids, size_t n, const uint32_t* lut, size_t lut_size, uint64_t* out) noexcept {
  COLMATCH_DASSERT_ALL_BELOW(ids, n, lut_size, "lut_u32: a dictionary id past the lookup table");
  using B = xsimd::batch<uint32_t, A>;
  using I = xsimd::batch<int32_t, A>;
  constexpr size_t L = B::size;
  const B zero(0u);
  const size_t full = n / 64;
  for (size_t w = 0; w < full; ++w) {
    const int32_t* p = reinterpret_cast<const int32_t*>(ids + w * 64);
    uint64_t word = 0;
    for (size_t k = 0; k < 64; k += L) {
      const B hit = B::gather(lut, I::load_unaligned(p + k));
      word |= lane_bits(hit != zero) << k;
    }
    out[w] = word;
  }
  if (n & 63) {
    uint64_t word = 0;
    for (size_t i = full * 64; i < n; ++i) word |= uint64_t{lut[ids[i]] != 0} << (i - full * 64);
    out[full] = word;
  }
}

template <class A>
void bits32_u32(const uint32_t* ids, size_t n, uint32_t bits, uint64_t* out) noexcept {
  COLMATCH_DASSERT_ALL_BELOW(ids, n, 32u, "bits32_u32: an id of 32 or more");
  using B = xsimd::batch<uint32_t, A>;
  constexpr size_t L = B::size;
  const B vb(bits), one(1u);
  const size_t full = n / 64;
  for (size_t w = 0; w < full; ++w) {
    const uint32_t* p = ids + w * 64;
    uint64_t word = 0;
    for (size_t k = 0; k < 64; k += L) word |= lane_bits(((vb >> B::load_unaligned(p + k)) & one) == one) << k;
    out[w] = word;
  }
  if (n & 63) {
    uint64_t word = 0;
    for (size_t i = full * 64; i < n; ++i) word |= uint64_t{((bits >> ids[i]) & 1u) != 0} << (i - full * 64);
    out[full] = word;
  }
}

// --- word-wise bitmask algebra ------------------------------------------------------------------
template <class A, class Op>
inline void words_loop(uint64_t* dst, const uint64_t* src, size_t nw, Op op) noexcept {
  using B = xsimd::batch<uint64_t, A>;
  constexpr size_t L = B::size;
  size_t w = 0;
  for (; w + L <= nw; w += L) op(B::load_unaligned(dst + w), B::load_unaligned(src + w)).store_unaligned(dst + w);
  for (; w < nw; ++w) dst[w] = op(dst[w], src[w]);
}

template <class A>
void and_words(uint64_t* dst, const uint64_t* src, size_t nw) noexcept {
  words_loop<A>(dst, src, nw, [](auto a, auto b) { return a & b; });
}
template <class A>
void or_words(uint64_t* dst, const uint64_t* src, size_t nw) noexcept {
  words_loop<A>(dst, src, nw, [](auto a, auto b) { return a | b; });
}
template <class A>
void andnot_words(uint64_t* dst, const uint64_t* src, size_t nw) noexcept {
  words_loop<A>(dst, src, nw, [](auto a, auto b) { return a & ~b; });
}

// popcnt per word: VPOPCNTDQ is not part of AVX-512BW, and per-word POPCNT already runs at
// one word per cycle, faster than any lookup-table SIMD count on these widths.
template <class A>
uint64_t popcount(const uint64_t* words, size_t nw) noexcept {
  uint64_t c0 = 0, c1 = 0;
  size_t w = 0;
  for (; w + 2 <= nw; w += 2) {
    c0 += static_cast<uint64_t>(__builtin_popcountll(words[w]));
    c1 += static_cast<uint64_t>(__builtin_popcountll(words[w + 1]));
  }
  if (w < nw) c0 += static_cast<uint64_t>(__builtin_popcountll(words[w]));
  return c0 + c1;
}

template <class A>
constexpr KernelTable make_table(Isa isa) noexcept {
  return KernelTable{isa,         cmp_f64<A>,   eq_u32<A>,   lut_u32<A>,      bits32_u32<A>,
                     cmp2_f64<A>, and_words<A>, or_words<A>, andnot_words<A>, popcount<A>};
}

}  // namespace
}  // namespace colmatch::kernels
