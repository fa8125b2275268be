// The kernels of kernels_impl.hpp instantiated for xsimd::sse2; this file alone is compiled with
// that instruction set's flags (see kernels/CMakeLists.txt).
#include "kernels/kernels_impl.hpp"
#include "kernels/kernels_table.hpp"

namespace colmatch::kernels {
const KernelTable kSse2Table = make_table<xsimd::sse2>(Isa::SSE2);
}  // namespace colmatch::kernels
