// colmatch kernels: column-at-a-time predicates that write bitmasks over taskers.
//
// Layout contract shared by every kernel here:
//   * A column is a plain array of `n` values (double or uint32 dictionary ids); no padding needed.
//   * A bitmask is an array of ceil(n / 64) uint64 words; bit (i % 64) of word (i / 64) is row i.
//     Kernels that write a bitmask write every word, and clear the bits at and past row n in the last
//     word, so masks can be combined word-wise without masking the tail again.
//   * Kernels never allocate, throw, print or read global state; they are thread-safe on disjoint outputs.
//
// Each kernel exists once per instruction set (scalar twin, SSE2, AVX2, AVX-512BW), built from one
// template per kernel (kernels_impl.hpp) in one translation unit per instruction set with its own flags.
// `active()` picks the best one the CPU supports once per process; the environment variable
// COLMATCH_ISA=scalar|sse2|avx2|avx512 forces one (falling back to the best supported if it is not).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace colmatch::kernels {

/// Relational operator of a comparison `column_value OP scalar` (Grid Engine relops).
enum class CmpOp : uint8_t { EQ, NE, LT, LE, GT, GE };

/// Instruction sets a kernel table can be built for, in increasing preference.
enum class Isa : uint8_t { Scalar = 0, SSE2 = 1, AVX2 = 2, AVX512 = 3 };

/// Words needed for a bitmask over `n` rows.
constexpr size_t words_for(size_t n) noexcept { return (n + 63) / 64; }

/// One instruction set's kernels. All function pointers are non-null in a table returned below.
struct KernelTable {
  Isa isa;
  /// out[i] = (col[i] OP v) for i < n. NaN compares false under every op except NE (IEEE semantics).
  void (*cmp_f64)(const double* col, size_t n, CmpOp op, double v, uint64_t* out) noexcept;
  /// out[i] = (ids[i] == id) for i < n.
  void (*eq_u32)(const uint32_t* ids, size_t n, uint32_t id, uint64_t* out) noexcept;
  /// Set membership through a lookup table: out[i] = lut[ids[i]] != 0. Every ids[i] must be < lut_size
  /// (the dictionary size); lut holds 0 or 0xFFFFFFFF per dictionary id.
  void (*lut_u32)(const uint32_t* ids, size_t n, const uint32_t* lut, size_t lut_size, uint64_t* out) noexcept;
  /// Set membership for small dictionaries: out[i] = bit ids[i] of `bits`. Every ids[i] must be < 32.
  /// One variable shift per row (vpsrlvd) instead of a gather: as fast as id equality.
  void (*bits32_u32)(const uint32_t* ids, size_t n, uint32_t bits, uint64_t* out) noexcept;
  /// Two levels of one attribute in one pass (Grid Engine strict hierarchy, queue and host):
  /// out[i] = (a[i] OP v || a_absent[i]) && (b[i] OP v || b_absent[i]). Same NaN rules as cmp_f64.
  void (*cmp2_f64)(const double* a, const uint64_t* a_absent, const double* b, const uint64_t* b_absent, size_t n,
                   CmpOp op, double v, uint64_t* out) noexcept;
  /// dst[w] &= src[w] for w < nwords.
  void (*and_words)(uint64_t* dst, const uint64_t* src, size_t nwords) noexcept;
  /// dst[w] |= src[w] for w < nwords.
  void (*or_words)(uint64_t* dst, const uint64_t* src, size_t nwords) noexcept;
  /// dst[w] &= ~src[w] for w < nwords.
  void (*andnot_words)(uint64_t* dst, const uint64_t* src, size_t nwords) noexcept;
  /// Number of set bits in words[0, nwords).
  uint64_t (*popcount)(const uint64_t* words, size_t nwords) noexcept;
};

/// The kernel table for `isa`, or nullptr when that set was not compiled in or the CPU lacks it.
const KernelTable* table_for(Isa isa) noexcept;

/// The table of `want` if this CPU can run it, else of the best instruction set below it that it can
/// (scalar at worst). Never null.
const KernelTable& best_at_most(Isa want) noexcept;

/// The kernel table chosen for this process: best_at_most(COLMATCH_ISA), or the best available when
/// the variable is unset. Thread-safe; chosen once. Only entry points (the CLI, benchmarks, tests)
/// call this; the engine takes its table as an argument from them.
const KernelTable& active() noexcept;

/// Instruction sets both compiled in and supported by this CPU, scalar first.
std::vector<Isa> usable_isas();

/// "scalar", "sse2", "avx2" or "avx512".
std::string_view isa_name(Isa isa) noexcept;

/// Parses an isa_name(); returns false when `name` is none of them.
bool parse_isa(std::string_view name, Isa& out) noexcept;

/// Index of the first set bit at or after `pos` in words[0, nwords), or nwords * 64 if there is none.
/// Skips zero words whole; O(distance / 64).
inline size_t find_next_set(const uint64_t* words, size_t nwords, size_t pos) noexcept {
  size_t w = pos >> 6;
  if (w >= nwords) return nwords * 64;
  uint64_t cur = words[w] & (~uint64_t{0} << (pos & 63));
  while (cur == 0) {
    if (++w == nwords) return nwords * 64;
    cur = words[w];
  }
  return (w << 6) + static_cast<size_t>(__builtin_ctzll(cur));
}

/// Clears the bits at and past row n in the last word of a bitmask over n rows.
inline void clear_tail(uint64_t* words, size_t n) noexcept {
  if (n & 63) words[n >> 6] &= (uint64_t{1} << (n & 63)) - 1;
}

/// Sets rows [0, n) and clears the tail.
inline void fill_ones(uint64_t* words, size_t n) noexcept {
  for (size_t w = 0; w < words_for(n); ++w) words[w] = ~uint64_t{0};
  clear_tail(words, n);
}

/// dst = ~dst over rows [0, n), tail cleared.
inline void invert(uint64_t* words, size_t n) noexcept {
  for (size_t w = 0; w < words_for(n); ++w) words[w] = ~words[w];
  clear_tail(words, n);
}

}  // namespace colmatch::kernels
