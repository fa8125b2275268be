// The load formula with the load correction (load_correction.hpp), as Son of Grid Engine 8.1.9's
// sort_hosts.c scaled_mixed_load evaluates it.
#include "engine/placement/load_correction.hpp"

namespace colmatch {

double LoadCorrection::host_load(uint32_t h, double slots) const noexcept {
  constexpr double kErrorLoad = 9999;
  auto operand = [&](const Operand& o, double& v) {
    if (o.value == UINT32_MAX) {
      v = o.constant;
      return true;
    }
    const size_t at = static_cast<size_t>(h) * names.size() + o.value;
    if (std::isnan(base[at])) return false;
    v = base[at] + per_slot[at] * slots;
    return true;
  };
  double load = 0;
  for (const Term& t : terms) {
    double v = 0, b = 0;
    if (!operand(t.a, v)) return kErrorLoad;
    if (t.op != 0) {
      if (!operand(t.b, b)) return kErrorLoad;
      switch (t.op) {
        case '*': v *= b; break;
        case '/': v /= b; break;
        case '&': v = static_cast<double>(static_cast<uint32_t>(v) & static_cast<uint32_t>(b)); break;
        case '|': v = static_cast<double>(static_cast<uint32_t>(v) | static_cast<uint32_t>(b)); break;
        default: v = static_cast<double>(static_cast<uint32_t>(v) ^ static_cast<uint32_t>(b)); break;
      }
    }
    load = t.minus ? load - v : load + v;
  }
  return load;
}

bool LoadCorrection::alarm(uint32_t r, uint32_t h, double slots) const noexcept {
  if (threshold_first.empty()) return false;
  for (uint32_t i = threshold_first[r]; i < threshold_first[r + 1]; ++i) {
    const Threshold& t = thresholds[i];
    const size_t at = static_cast<size_t>(h) * names.size() + t.value;
    if (!std::isnan(base[at]) && apply(t.relop, base[at] + per_slot[at] * slots, t.limit)) return true;
  }
  return false;
}

}  // namespace colmatch
