#include "loaders/memory.hpp"

#include <cmath>

#include <fmt/format.h>

#include "loaders/errors.hpp"
#include "loaders/native.hpp"

namespace colmatch::loaders {
namespace {

template <class V>
void require_length(const V& v, size_t n, const char* input, const std::string& field) {
  if (!v.empty() && v.size() != n) throw LoadError(input, 0, field, fmt::format("{} values for {} rows", v.size(), n));
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    if (comma > at) out.push_back(text.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

TaskerTable build_taskers(const MemoryInputs& in, const FarmFile& farm) {
  const size_t n = in.tasker_names.size();
  require_length(in.tasker_power, n, "taskers", "power");
  require_length(in.tasker_hosts, n, "taskers", "host");
  struct Col {
    uint32_t attr;
    const AttributeColumn* values;
  };
  std::vector<Col> cols;
  for (const AttributeColumn& c : in.attributes) {
    const auto attr = farm.catalog.find(c.name);
    if (!attr) throw LoadError("taskers", 0, "attrs." + c.name, "unknown attribute");
    const bool numbers = !c.numbers.empty() || c.texts.empty();
    if (!c.numbers.empty() && !c.texts.empty())
      throw LoadError("taskers", 0, "attrs." + c.name, "numbers or texts, not both");
    if (numbers && !is_numeric(farm.catalog.at(*attr).type))
      throw LoadError("taskers", 0, "attrs." + c.name, "expected strings");
    if ((numbers ? c.numbers.size() : c.texts.size()) != n)
      throw LoadError("taskers", 0, "attrs." + c.name,
                      fmt::format("{} values for {} rows", numbers ? c.numbers.size() : c.texts.size(), n));
    cols.push_back({*attr, &c});
  }
  TaskerBuilder b(farm.catalog);
  apply_globals(farm, b);
  const uint32_t power_attr =
      farm.power_attribute.empty() ? kNone : farm.catalog.find(farm.power_attribute).value_or(kNone);
  for (size_t t = 0; t < n; ++t) {
    const size_t row = t + 1;
    uint32_t host = kNone;
    if (!in.tasker_hosts.empty() && !in.tasker_hosts[t].empty()) {
      const auto found = b.find_host(in.tasker_hosts[t]);
      host = found ? *found : b.add_host(in.tasker_hosts[t]);
    }
    try {
      b.add(in.tasker_names[t], 1.0, host);
    } catch (const ValueError& e) {
      throw LoadError("taskers", row, "name", e.what());
    }
    const bool power_given = !in.tasker_power.empty();
    if (power_given) {
      if (!std::isfinite(in.tasker_power[t])) throw LoadError("taskers", row, "power", "expected a finite number");
      b.set_power(in.tasker_power[t]);
    }
    for (const Col& c : cols) {
      const AttributeDef& def = farm.catalog.at(c.attr);
      try {
        if (is_numeric(def.type)) {  // numbers, or texts in the attribute's units ("4G", "1:00:00")
          double v = 0;
          if (!c.values->numbers.empty()) v = c.values->numbers[t];
          else if (const auto& text = c.values->texts[t]) v = parse_number(def.type, *text);
          else continue;
          if (std::isnan(v)) continue;
          b.set_number(c.attr, v);
          if (c.attr == power_attr && !power_given) b.set_power(v);
        } else {
          const auto& v = c.values->texts[t];
          if (!v) continue;
          if (def.multi_valued) {
            const auto items = split_list(*v);
            if (!items.empty()) b.set_list(c.attr, items);
          } else {
            b.set(c.attr, *v);
          }
        }
      } catch (const ValueError& e) {
        throw LoadError("taskers", row, "attrs." + c.values->name, e.what());
      }
    }
  }
  try {
    return std::move(b).build();
  } catch (const ValueError& e) {
    throw LoadError("taskers", 0, "", e.what());
  }
}

JobTable build_jobs(const MemoryInputs& in, const Catalog& catalog) {
  const size_t n = in.job_ids.size();
  require_length(in.requests, n, "jobs", "requests");
  require_length(in.soft, n, "jobs", "soft");
  require_length(in.owners, n, "jobs", "owner");
  require_length(in.groups, n, "jobs", "group");
  require_length(in.queues, n, "jobs", "queue");
  require_length(in.accounts, n, "jobs", "account");
  require_length(in.slots, n, "jobs", "slots");
  require_length(in.priority, n, "jobs", "priority");
  require_length(in.submit, n, "jobs", "submit");
  require_length(in.runtime, n, "jobs", "runtime");
  require_length(in.walltime, n, "jobs", "walltime");
  std::vector<uint32_t> res_attr;
  for (const AttributeColumn& r : in.resources) {
    const auto attr = catalog.find(r.name);
    if (!attr) throw LoadError("jobs", 0, "resources." + r.name, "unknown attribute");
    const size_t got = r.numbers.empty() ? r.texts.size() : r.numbers.size();
    if (got != n || (!r.numbers.empty() && !r.texts.empty()))
      throw LoadError("jobs", 0, "resources." + r.name, fmt::format("{} values for {} rows", got, n));
    res_attr.push_back(*attr);
  }
  auto text = [](const std::vector<std::string>& v, size_t j) { return v.empty() ? std::string() : v[j]; };
  auto num = [](const std::vector<double>& v, size_t j, double def) { return v.empty() ? def : v[j]; };
  JobBuilder b(catalog);
  JobIds ids;
  const double nan = std::nan("");
  for (size_t j = 0; j < n; ++j) {
    const size_t row = j + 1;
    const std::string& id = in.job_ids[j];
    if (id.empty()) throw LoadError("jobs", row, "id", "a job needs an id");
    ids.add("jobs", row, "id", id);
    const double slots = num(in.slots, j, 1), priority = num(in.priority, j, 0), submit = num(in.submit, j, 0);
    if (!(slots >= 1) || slots != std::floor(slots) || slots > 1e9)
      throw LoadError("jobs", row, "slots", "expected a whole number >= 1");
    if (!std::isfinite(priority)) throw LoadError("jobs", row, "priority", "expected a finite number");
    if (!std::isfinite(submit)) throw LoadError("jobs", row, "submit", "expected a finite number");
    const uint32_t k =
        b.add(id, text(in.owners, j), text(in.groups, j), priority, submit, static_cast<uint32_t>(slots));
    auto reject = [&](const std::string& field, const std::string& why) {
      b.reject(k, fmt::format("jobs:{}: job {}: field '{}': {}", row, id, field, why));
    };
    try {
      if (!text(in.requests, j).empty()) b.set_request(in.requests[j]);
    } catch (const RequestError& e) {
      reject("requests", e.what());
    }
    try {
      if (!text(in.soft, j).empty()) b.set_soft(in.soft[j]);
    } catch (const RequestError& e) {
      reject("soft", e.what());
    }
    for (size_t r = 0; r < res_attr.size(); ++r) {
      const AttributeColumn& col = in.resources[r];
      try {
        double amount = 0;
        if (!col.numbers.empty()) amount = col.numbers[j];
        else if (col.texts[j]) amount = parse_number(catalog.at(res_attr[r]).type, *col.texts[j]);
        else continue;
        if (std::isnan(amount)) continue;
        b.set_amount(res_attr[r], check_number(catalog.at(res_attr[r]), amount));
      } catch (const ValueError& e) {
        reject("resources." + in.resources[r].name, e.what());
        break;
      }
    }
    double runtime = num(in.runtime, j, nan), walltime = num(in.walltime, j, nan);
    if (runtime < 0 || std::isinf(runtime)) {  // the job is rejected with the reason, its time left unknown
      reject("runtime", "expected a number of seconds >= 0");
      runtime = nan;
    }
    if (walltime < 0 || std::isinf(walltime)) {
      reject("walltime", "expected a number of seconds >= 0");
      walltime = nan;
    }
    b.set_times(runtime, walltime);
    b.set_credentials(text(in.queues, j), text(in.accounts, j));
  }
  return std::move(b).build();
}

}  // namespace

Dataset load_memory(const MemoryInputs& in) {
  FarmFile farm = read_farm_toml_text(in.farm_toml, "farm");
  TaskerTable taskers = build_taskers(in, farm);
  JobTable jobs = build_jobs(in, farm.catalog);
  return dataset_from(std::move(farm), std::move(taskers), std::move(jobs));
}

}  // namespace colmatch::loaders
