// The one truth table of the relational operators (Grid Engine relops `== != < <= > >=`), shared by
// the scalar twins, the SIMD kernels (xsimd batches) and the catalog's scalar `apply`.
//
// NaN rule: every op is false on an unordered pair except NE, which is defined as the negation of
// EQ (so NaN != x is true, as in scalar C++; x86's NEQ_OQ predicate would say false).
#pragma once

#include "kernels/kernels.hpp"

namespace colmatch::kernels {

/// Calls f with a comparison functor for `op`; the functor takes two scalars or two xsimd batches
/// of one type and returns a bool or a batch_bool. Never throws.
template <class F>
inline void with_relop(CmpOp op, F&& f) noexcept {
  switch (op) {
    case CmpOp::EQ: f([](auto a, auto b) { return a == b; }); break;
    case CmpOp::NE: f([](auto a, auto b) { return !(a == b); }); break;
    case CmpOp::LT: f([](auto a, auto b) { return a < b; }); break;
    case CmpOp::LE: f([](auto a, auto b) { return a <= b; }); break;
    case CmpOp::GT: f([](auto a, auto b) { return a > b; }); break;
    case CmpOp::GE: f([](auto a, auto b) { return a >= b; }); break;
  }
}

/// (a op b) for two doubles, by the table above.
inline bool relop_holds(CmpOp op, double a, double b) noexcept {
  bool r = false;
  with_relop(op, [&](auto cmp) { r = cmp(a, b); });
  return r;
}

}  // namespace colmatch::kernels
