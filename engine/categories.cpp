#include "engine/categories.hpp"

#include <cmath>
#include <cstring>
#include <string>
#include <unordered_map>

namespace colmatch {

void job_need(const Catalog& catalog, const JobTable& jobs, uint32_t j, std::vector<double>& out) {
  const auto& cons = catalog.consumables();
  out.resize(cons.size());
  const double slots = jobs.slots[j];
  for (size_t k = 0; k < cons.size(); ++k) {
    const AttributeDef& d = catalog.at(cons[k]);
    double a = jobs.amount[k][j];
    if (std::isnan(a)) {
      if (d.name == "slots") {
        out[k] = slots;  // the built-in slots consumable is charged once per slot
        continue;
      }
      a = d.default_amount.value_or(0.0);
    }
    out[k] = (d.scope == ConsumeScope::PerSlot && d.name != "slots") ? a * slots : a;
  }
}

namespace {
uint64_t fnv1a(const void* data, size_t n, uint64_t h = 14695981039346656037ULL) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ULL;
  return h;
}
}  // namespace

Categories categorize(const Catalog& catalog, const JobTable& jobs) {
  Categories c;
  c.of_job.assign(jobs.size(), kNone);
  std::unordered_map<std::string, uint32_t> index;
  std::vector<double> need;
  std::string key;
  for (uint32_t j = 0; j < jobs.size(); ++j) {
    if (jobs.rejected(j)) continue;
    job_need(catalog, jobs, j, need);
    key.assign(reinterpret_cast<const char*>(&jobs.request[j]), sizeof(uint32_t));
    key.append(reinterpret_cast<const char*>(&jobs.soft[j]), sizeof(uint32_t));
    key.append(reinterpret_cast<const char*>(&jobs.slots[j]), sizeof(uint32_t));
    for (double v : need) {
      const double z = v + 0.0;  // -0.0 and 0.0 are one key
      key.append(reinterpret_cast<const char*>(&z), sizeof(double));
    }
    auto [it, fresh] = index.emplace(key, static_cast<uint32_t>(c.request.size()));
    if (fresh) {
      c.request.push_back(jobs.request[j]);
      c.soft.push_back(jobs.soft[j]);
      c.slots.push_back(jobs.slots[j]);
      c.need.push_back(need);
      const std::string& text = jobs.request_text[jobs.request[j]];
      uint64_t h = fnv1a(text.data(), text.size());
      const std::string& soft = jobs.request_text[jobs.soft[j]];
      if (jobs.soft[j] != 0) h = fnv1a(soft.data(), soft.size(), h ^ 0x5f);
      // the slot count and charges; the request indices (first 8 bytes) are run-specific, the texts are not
      h = fnv1a(key.data() + 2 * sizeof(uint32_t), key.size() - 2 * sizeof(uint32_t), h);
      c.hash.push_back(h);
      c.job_count.push_back(0);
    }
    c.of_job[j] = it->second;
    ++c.job_count[it->second];
  }
  return c;
}

}  // namespace colmatch
