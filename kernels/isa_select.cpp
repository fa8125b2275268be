// Instruction-set selection: which kernel table a process uses. The best instruction set compiled in
// and supported by the CPU (and OS, as xsimd's cpuid checks XCR0), unless COLMATCH_ISA names another.
// (Placing jobs on taskers is engine/dispatch; nothing here knows of jobs.)
#include <cstdlib>

#include <xsimd/xsimd.hpp>

#include "kernels/kernels.hpp"
#include "kernels/kernels_table.hpp"

namespace colmatch::kernels {

namespace {
bool cpu_supports(Isa isa) noexcept {
#if defined(COLMATCH_X86_KERNELS)
  static const auto archs = xsimd::available_architectures();
  switch (isa) {
    case Isa::Scalar: return true;
    case Isa::SSE2: return archs.sse2;
    case Isa::AVX2: return archs.avx2;
    case Isa::AVX512: return archs.avx512bw && archs.avx512dq && archs.avx512f;
  }
  return false;
#else
  return isa == Isa::Scalar;
#endif
}

const KernelTable* compiled(Isa isa) noexcept {
  switch (isa) {
    case Isa::Scalar: return &kScalarTable;
#if defined(COLMATCH_X86_KERNELS)
    case Isa::SSE2: return &kSse2Table;
    case Isa::AVX2: return &kAvx2Table;
    case Isa::AVX512: return &kAvx512Table;
#else
    default: return nullptr;
#endif
  }
  return nullptr;
}

const KernelTable& choose() noexcept {
  Isa want = Isa::AVX512;
  if (const char* env = std::getenv("COLMATCH_ISA"); env != nullptr) {
    Isa forced;
    if (parse_isa(env, forced)) want = forced;
  }
  return best_at_most(want);
}
}  // namespace

const KernelTable& best_at_most(Isa want) noexcept {
  for (int i = static_cast<int>(want); i >= 0; --i)
    if (const KernelTable* t = table_for(static_cast<Isa>(i))) return *t;
  return kScalarTable;
}

const KernelTable* table_for(Isa isa) noexcept { return cpu_supports(isa) ? compiled(isa) : nullptr; }

const KernelTable& active() noexcept {
  static const KernelTable& table = choose();
  return table;
}

std::vector<Isa> usable_isas() {
  std::vector<Isa> out;
  for (Isa i : {Isa::Scalar, Isa::SSE2, Isa::AVX2, Isa::AVX512})
    if (table_for(i) != nullptr) out.push_back(i);
  return out;
}

std::string_view isa_name(Isa isa) noexcept {
  switch (isa) {
    case Isa::Scalar: return "scalar";
    case Isa::SSE2: return "sse2";
    case Isa::AVX2: return "avx2";
    case Isa::AVX512: return "avx512";
  }
  return "?";
}

bool parse_isa(std::string_view name, Isa& out) noexcept {
  for (Isa i : {Isa::Scalar, Isa::SSE2, Isa::AVX2, Isa::AVX512})
    if (isa_name(i) == name) {
      out = i;
      return true;
    }
  return false;
}

}  // namespace colmatch::kernels
