// Internal: the per-instruction-set tables defined in kernels_<isa>.cpp. Not installed.
#pragma once
#include "kernels/kernels.hpp"

namespace colmatch::kernels {
extern const KernelTable kScalarTable;
#if defined(COLMATCH_X86_KERNELS)
extern const KernelTable kSse2Table;
extern const KernelTable kAvx2Table;
extern const KernelTable kAvx512Table;
#endif
}  // namespace colmatch::kernels
