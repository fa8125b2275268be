#include "loaders/task_ranges.hpp"

#include <charconv>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace colmatch::loaders {

std::vector<uint64_t> expand_task_ranges(std::string_view text, uint64_t room, uint64_t min_id) {
  std::vector<uint64_t> out;
  const std::string_view all = text;
  text = text.substr(0, text.find('%'));  // Slurm's throttle: 1-100%5
  auto bad = [&] { return std::invalid_argument(fmt::format("'{}' is not a list of task ranges", all)); };
  size_t i = 0;
  while (i <= text.size()) {
    size_t e = text.find(',', i);
    if (e == std::string_view::npos) e = text.size();
    const std::string_view item = text.substr(i, e - i);
    uint64_t a = 0, z = 0, step = 1;
    const char* p = item.data();
    const char* end = item.data() + item.size();
    auto num = [&](uint64_t& v) {
      auto [q, ec] = std::from_chars(p, end, v);
      if (ec != std::errc()) throw bad();
      p = q;
    };
    num(a);
    z = a;
    if (p < end && *p == '-') ++p, num(z);
    if (p < end && *p == ':') ++p, num(step);
    if (p != end || a < min_id || z < a || step == 0) throw bad();
    if ((z - a) / step + 1 > room - out.size())
      throw std::invalid_argument(fmt::format("'{}' names more than {} tasks", all, room));
    for (uint64_t t = a; t <= z; t += step) out.push_back(t);
    i = e + 1;
  }
  return out;
}

}  // namespace colmatch::loaders
