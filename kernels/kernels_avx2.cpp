// The kernels of kernels_impl.hpp instantiated for xsimd::avx2; this file alone is compiled with
// that instruction set's flags (see kernels/CMakeLists.txt).
#include "kernels/kernels_impl.hpp"
#include "kernels/kernels_table.hpp"

namespace colmatch::kernels {
const KernelTable kAvx2Table = make_table<xsimd::avx2>(Isa::AVX2);
}  // namespace colmatch::kernels
