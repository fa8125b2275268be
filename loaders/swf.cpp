#include "loaders/swf.hpp"

#include <charconv>
#include <cmath>
#include <unordered_set>

#include <fmt/format.h>

#include "loaders/errors.hpp"

namespace colmatch::loaders {
namespace {

const char* const kFieldNames[18] = {"job number",
                                     "submit time",
                                     "wait time",
                                     "run time",
                                     "allocated processors",
                                     "average CPU time",
                                     "used memory",
                                     "requested processors",
                                     "requested time",
                                     "requested memory",
                                     "status",
                                     "user ID",
                                     "group ID",
                                     "executable number",
                                     "queue number",
                                     "partition number",
                                     "preceding job number",
                                     "think time"};

struct SwfJob {
  std::string id;
  double f[18];
  size_t line;
};

double number(std::string_view s, const std::string& path, size_t line, size_t field) {
  double v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v))
    throw LoadError(path, line, kFieldNames[field], fmt::format("'{}' is not a number", s));
  return v;
}

}  // namespace

Dataset load_swf(const std::string& path, const ProgressFn& progress) {
  LineReader in(path, progress);
  double max_nodes = -1, max_procs = -1;
  std::vector<SwfJob> raw;
  std::string_view line;
  while (in.next(line)) {
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) continue;
    if (line[first] == ';') {  // header: "; Key: value"
      const std::string_view h = line.substr(first + 1);
      const size_t colon = h.find(':');
      if (colon == std::string_view::npos) continue;
      std::string_view key = h.substr(0, colon), value = h.substr(colon + 1);
      key.remove_prefix(std::min(key.find_first_not_of(' '), key.size()));
      value.remove_prefix(std::min(value.find_first_not_of(' '), value.size()));
      value = value.substr(0, value.find_first_of(" \t\r"));
      if (key == "MaxNodes" || key == "MaxProcs") {
        double v = 0;
        const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
        if (ec != std::errc() || !(v > 0) || v > 1e7)
          throw LoadError(path, in.line(), std::string(key), fmt::format("'{}' is not a count from 1 to 10^7", value));
        (key == "MaxNodes" ? max_nodes : max_procs) = v;
      }
      continue;
    }
    SwfJob j;
    j.line = in.line();
    size_t pos = first, n = 0;
    for (; n < 18; ++n) {
      pos = line.find_first_not_of(" \t\r", pos);
      if (pos == std::string_view::npos) break;
      const size_t end = std::min(line.find_first_of(" \t\r", pos), line.size());
      const std::string_view tok = line.substr(pos, end - pos);
      if (n == 0) j.id = std::string(tok);
      j.f[n] = number(tok, path, j.line, n);
      pos = end;
    }
    if (n < 18) throw LoadError(path, j.line, "", fmt::format("expected 18 fields, found {}", n));
    raw.push_back(std::move(j));
  }

  Dataset ds;
  ds.name = "swf";
  const uint32_t a_slots = ds.catalog.add(consumable_attribute("slots", AttrType::Int));
  auto procs_of = [](const SwfJob& j) { return j.f[4] > 0 ? j.f[4] : j.f[7]; };
  if (max_procs <= 0)
    for (const auto& j : raw) max_procs = std::max(max_procs, procs_of(j));
  if (max_procs <= 0) max_procs = 1;
  if (max_nodes <= 0) max_nodes = 1;
  const double ppn = std::floor(max_procs / max_nodes);
  if (ppn < 1)
    throw LoadError(path, 0, "MaxProcs",
                    fmt::format("{} processors on {} nodes is less than one a node", max_procs, max_nodes));
  TaskerBuilder tb(ds.catalog);
  for (size_t i = 0; i < static_cast<size_t>(max_nodes); ++i) {
    tb.add(fmt::format("node{:04}", i + 1));
    tb.set_number(a_slots, ppn);
  }
  ds.taskers = std::move(tb).build();

  JobBuilder jb(ds.catalog);
  JobIds ids;
  for (const SwfJob& j : raw) {
    ids.add(path, j.line, "job number", j.id);
    const double procs = procs_of(j);
    const auto cred = [](const char* prefix, double v) {
      return v < 0 ? std::string() : fmt::format("{}{}", prefix, v);
    };
    const uint32_t k = jb.add(j.id, cred("u", j.f[11]), cred("g", j.f[12]), 0, j.f[1],
                              procs >= 1 && procs <= 1e9 ? static_cast<uint32_t>(procs) : 1);
    jb.set_rule(AllocationRule::FillUp);
    jb.set_credentials(cred("q", j.f[14]), "");
    const std::string where = fmt::format("{}:{}: job {}", path, j.line, j.id);
    if (!(procs >= 1) || procs > 1e9) {
      jb.reject(k, fmt::format("{}: field 'allocated processors': no processors ({})", where, procs));
      continue;
    }
    if (j.f[3] < 0) {
      jb.reject(k, fmt::format("{}: field 'run time': unknown (-1)", where));
      continue;
    }
    if (j.f[1] < 0) {
      jb.reject(k, fmt::format("{}: field 'submit time': unknown (-1)", where));
      continue;
    }
    jb.set_times(j.f[3], j.f[8] > 0 ? j.f[8] : std::numeric_limits<double>::quiet_NaN());
  }
  ds.jobs = std::move(jb).build();
  return ds;
}

}  // namespace colmatch::loaders
