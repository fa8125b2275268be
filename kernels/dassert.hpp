// COLMATCH_DASSERT(cond, msg): a precondition check compiled only into debug builds (NDEBUG unset)
// or when COLMATCH_DEBUG_ASSERTS is defined. Kernels are noexcept and never print in release builds;
// in a debug build a broken contract (a dictionary id past the lookup table, a mask of the wrong
// size) aborts at once with the file, line and condition instead of reading out of bounds.
#pragma once

#if !defined(NDEBUG) || defined(COLMATCH_DEBUG_ASSERTS)
#include <cstdio>
#include <cstdlib>
#define COLMATCH_DASSERT(cond, msg)                                                                     \
  do {                                                                                                  \
    if (!(cond)) {                                                                                      \
      std::fprintf(stderr, "%s:%d: COLMATCH_DASSERT(%s) failed: %s\n", __FILE__, __LINE__, #cond, msg); \
      std::abort();                                                                                     \
    }                                                                                                   \
  } while (0)
#define COLMATCH_DASSERT_ENABLED 1
// Every ids[i] < bound for i < n (a macro, not a function: kernels are compiled per instruction set and
// must not share inline functions with baseline code).
#define COLMATCH_DASSERT_ALL_BELOW(ids, n, bound, msg)                              \
  do {                                                                              \
    for (size_t i_ = 0; i_ < (n); ++i_) COLMATCH_DASSERT((ids)[i_] < (bound), msg); \
  } while (0)
#else
#define COLMATCH_DASSERT(cond, msg) ((void)0)
#define COLMATCH_DASSERT_ALL_BELOW(ids, n, bound, msg) ((void)(bound))
#define COLMATCH_DASSERT_ENABLED 0
#endif
