// The kernels of kernels_impl.hpp instantiated for xsimd::avx512bw; this file alone is compiled with
// that instruction set's flags (see kernels/CMakeLists.txt).
#include "kernels/kernels_impl.hpp"
#include "kernels/kernels_table.hpp"

namespace colmatch::kernels {
const KernelTable kAvx512Table = make_table<xsimd::avx512bw>(Isa::AVX512);
}  // namespace colmatch::kernels
