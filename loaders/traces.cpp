#include "loaders/traces.hpp"

#include <charconv>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "loaders/errors.hpp"

namespace colmatch::loaders {
namespace {

struct Csv {
  LineReader& in;
  std::vector<std::string_view> f;

  [[noreturn]] void fail(const std::string& field, const std::string& msg) const {
    throw LoadError(in.path(), in.line(), field, msg);
  }
  int64_t integer(size_t i, const char* name) const {
    if (i >= f.size() || f[i].empty()) fail(name, "missing value");
    int64_t v = 0;
    auto [p, ec] = std::from_chars(f[i].data(), f[i].data() + f[i].size(), v);
    if (ec != std::errc() || p != f[i].data() + f[i].size()) fail(name, fmt::format("'{}' is not an integer", f[i]));
    return v;
  }
  // NaN when the field is empty (optional in the schema).
  double real(size_t i, const char* name) const {
    if (i >= f.size() || f[i].empty()) return std::numeric_limits<double>::quiet_NaN();
    double v = 0;
    auto [p, ec] = std::from_chars(f[i].data(), f[i].data() + f[i].size(), v);
    if (ec != std::errc() || p != f[i].data() + f[i].size() || !std::isfinite(v))
      fail(name, fmt::format("'{}' is not a number", f[i]));
    return v;
  }
  void need(size_t n) const {
    if (f.size() < n) fail("", fmt::format("expected at least {} comma-separated fields, found {}", n, f.size()));
  }
};

AttributeDef attr(const char* name, AttrType t, bool consumable, ConsumeScope scope = ConsumeScope::PerSlot) {
  if (consumable) return consumable_attribute(name, t, scope);
  AttributeDef d;
  d.name = name;
  d.type = t;
  d.relop = is_numeric(t) ? Relop::LE : Relop::EQ;
  return d;
}

}  // namespace

Dataset load_google2011(const std::string& machine_events, const std::string& task_events, std::optional<int64_t> at_us,
                        const ProgressFn& progress) {
  Dataset ds;
  ds.name = "google-clusterdata-2011-2";
  ds.power_attribute = "cpu";
  const uint32_t a_cpu = ds.catalog.add(attr("cpu", AttrType::Double, true));
  const uint32_t a_mem = ds.catalog.add(attr("memory", AttrType::Double, true));
  const uint32_t a_plat = ds.catalog.add(attr("platform", AttrType::String, false));

  // --- tasks: last SUBMIT per task -----------------------------------------------------------------
  struct Task {
    int64_t job, index;
    int64_t time;
    std::string user;
    int64_t sched_class, priority;
    double cpu, mem;
    int64_t scheduled = -1, ended = -1;  // first SCHEDULE, then the first end event after it (us)
  };
  std::vector<Task> tasks;
  std::unordered_map<uint64_t, uint32_t> task_index;  // hash(job, index) -> position; collisions checked
  int64_t last_time = 0;
  {
    LineReader in(task_events, progress);
    Csv csv{in, {}};
    std::string_view line;
    while (in.next(line)) {
      if (line.empty()) continue;
      split_csv(line, csv.f);
      csv.need(13);
      const int64_t time = csv.integer(0, "time");
      last_time = std::max(last_time, time);
      const int64_t event = csv.integer(5, "event type");
      const int64_t job = csv.integer(2, "job ID"), idx = csv.integer(3, "task index");
      if (event != 0) {  // SCHEDULE 1; EVICT 2, FAIL 3, FINISH 4, KILL 5, LOST 6 end a run
        uint64_t probe = static_cast<uint64_t>(job) * 1000003ULL ^ static_cast<uint64_t>(idx);
        for (auto it = task_index.find(probe); it != task_index.end(); it = task_index.find(++probe)) {
          Task& t = tasks[it->second];
          if (t.job != job || t.index != idx) continue;
          if (event == 1 && t.scheduled < 0) t.scheduled = time;
          if (event >= 2 && event <= 6 && t.scheduled >= 0 && t.ended < 0) t.ended = time;
          break;
        }
        continue;
      }
      Task t{job,
             idx,
             time,
             std::string(csv.f[6]),
             csv.f[7].empty() ? -1 : csv.integer(7, "scheduling class"),
             csv.integer(8, "priority"),
             csv.real(9, "CPU request"),
             csv.real(10, "memory request")};
      csv.real(11, "disk space request");  // validated, not matched (see header)
      if (t.cpu < 0) csv.fail("CPU request", "a request must not be negative");
      if (t.mem < 0) csv.fail("memory request", "a request must not be negative");
      uint64_t key = static_cast<uint64_t>(job) * 1000003ULL ^ static_cast<uint64_t>(idx);
      while (true) {
        auto [it, fresh] = task_index.emplace(key, static_cast<uint32_t>(tasks.size()));
        if (fresh) {
          tasks.push_back(std::move(t));
          break;
        }
        Task& old = tasks[it->second];
        if (old.job == job && old.index == idx) {
          t.scheduled = old.scheduled;
          t.ended = old.ended;
          old = std::move(t);  // the last SUBMIT's requests win; first-SUBMIT order is kept
          break;
        }
        ++key;  // hash collision between distinct tasks: probe on
      }
    }
  }
  const int64_t at = at_us.value_or(last_time);

  // --- machines as of `at` --------------------------------------------------------------------------
  struct Machine {
    bool alive = false;
    std::string platform;
    double cpu = std::numeric_limits<double>::quiet_NaN(), mem = std::numeric_limits<double>::quiet_NaN();
    uint32_t order = 0;
  };
  std::unordered_map<int64_t, Machine> machines;
  std::vector<int64_t> first_seen;
  {
    LineReader in(machine_events, progress);
    Csv csv{in, {}};
    std::string_view line;
    while (in.next(line)) {
      if (line.empty()) continue;
      split_csv(line, csv.f);
      csv.need(6);
      const int64_t time = csv.integer(0, "time");
      if (time > at) continue;
      const int64_t id = csv.integer(1, "machine ID");
      const int64_t ev = csv.integer(2, "event type");
      const double cpu = csv.real(4, "CPUs"), mem = csv.real(5, "Memory");
      if (cpu < 0) csv.fail("CPUs", "a capacity must not be negative");
      if (mem < 0) csv.fail("Memory", "a capacity must not be negative");
      auto [it, fresh] = machines.try_emplace(id);
      Machine& m = it->second;
      if (fresh) {
        m.order = static_cast<uint32_t>(first_seen.size());
        first_seen.push_back(id);
      }
      switch (ev) {
        case 0:  // ADD: the machine's attributes as given
          m.alive = true;
          m.platform = std::string(csv.f[3]);
          m.cpu = cpu;
          m.mem = mem;
          break;
        case 1: m.alive = false; break;  // REMOVE
        case 2:                          // UPDATE: empty fields keep their value
          if (!csv.f[3].empty()) m.platform = std::string(csv.f[3]);
          if (!std::isnan(cpu)) m.cpu = cpu;
          if (!std::isnan(mem)) m.mem = mem;
          break;
        default: csv.fail("event type", fmt::format("unknown machine event type {}", ev));
      }
    }
  }
  TaskerBuilder tb(ds.catalog);
  for (int64_t id : first_seen) {
    const Machine& m = machines[id];
    if (!m.alive) continue;
    tb.add(fmt::format("{}", id), std::isnan(m.cpu) ? 0.0 : m.cpu);
    if (!std::isnan(m.cpu)) tb.set_number(a_cpu, m.cpu);
    if (!std::isnan(m.mem)) tb.set_number(a_mem, m.mem);
    if (!m.platform.empty()) tb.set(a_plat, m.platform);
  }
  ds.taskers = std::move(tb).build();

  JobBuilder jb(ds.catalog);
  for (const Task& t : tasks) {
    jb.add(fmt::format("{}.{}", t.job, t.index), t.user, t.sched_class < 0 ? "" : fmt::format("class{}", t.sched_class),
           static_cast<double>(t.priority), static_cast<double>(t.time) / 1e6, 1);
    if (!std::isnan(t.cpu)) jb.set_amount(a_cpu, t.cpu);
    if (!std::isnan(t.mem)) jb.set_amount(a_mem, t.mem);
    // runtime for `simulate`: first SCHEDULE to the end event; still running at the end of the events
    // read: to that end; never scheduled: unknown
    if (t.scheduled >= 0)
      jb.set_times(static_cast<double>((t.ended >= 0 ? t.ended : last_time) - t.scheduled) / 1e6,
                   std::numeric_limits<double>::quiet_NaN());
  }
  ds.jobs = std::move(jb).build();
  return ds;
}

Dataset load_openb(const std::string& nodes, const std::string& pods, const ProgressFn& progress) {
  Dataset ds;
  ds.name = "alibaba-openb-2023";
  ds.power_attribute = "cpu_milli";
  const uint32_t a_cpu = ds.catalog.add(attr("cpu_milli", AttrType::Int, true));
  const uint32_t a_mem = ds.catalog.add(attr("memory_mib", AttrType::Int, true));
  const uint32_t a_gpum = ds.catalog.add(attr("gpu_milli", AttrType::Int, true, ConsumeScope::PerJob));
  const uint32_t a_gpu = ds.catalog.add(attr("gpu", AttrType::Int, false));
  const uint32_t a_model = ds.catalog.add(attr("gpu_model", AttrType::String, false));

  {
    LineReader in(nodes, progress);
    Csv csv{in, {}};
    TaskerBuilder tb(ds.catalog);
    std::string_view line;
    while (in.next(line)) {
      if (line.empty()) continue;
      split_csv(line, csv.f);
      if (in.line() == 1 && csv.f[0] == "sn") continue;  // header
      csv.need(5);
      const double cpu = static_cast<double>(csv.integer(1, "cpu_milli"));
      try {
        tb.add(std::string(csv.f[0]), cpu);
      } catch (const ValueError& e) {
        csv.fail("sn", e.what());
      }
      const int64_t gpus = csv.integer(3, "gpu");
      for (const auto& [attr, value, field] :  // the catalog's checks, with file, line and field named
           {std::tuple{a_cpu, cpu, "cpu_milli"},
            {a_mem, static_cast<double>(csv.integer(2, "memory_mib")), "memory_mib"},
            {a_gpu, static_cast<double>(gpus), "gpu"},
            {a_gpum, static_cast<double>(gpus) * 1000.0, "gpu"}}) {  // in double: no integer overflow
        try {
          tb.set_number(attr, value);
        } catch (const ValueError& e) {
          csv.fail(field, e.what());
        }
      }
      if (!csv.f[4].empty()) tb.set(a_model, csv.f[4]);
    }
    ds.taskers = std::move(tb).build();
  }
  {
    LineReader in(pods, progress);
    Csv csv{in, {}};
    JobBuilder jb(ds.catalog);
    std::string_view line;
    while (in.next(line)) {
      if (line.empty()) continue;
      split_csv(line, csv.f);
      if (in.line() == 1 && csv.f[0] == "name") continue;  // header
      csv.need(5);
      const double submit =
          csv.f.size() > 8 && !csv.f[8].empty() ? static_cast<double>(csv.integer(8, "creation_time")) : 0;
      const std::string qos = csv.f.size() > 6 ? std::string(csv.f[6]) : std::string();
      jb.add(std::string(csv.f[0]), "", qos, 0, submit, 1);
      // runtime for `simulate`: deletion_time - scheduled_time when both are given
      if (csv.f.size() > 10 && !csv.f[9].empty() && !csv.f[10].empty()) {
        const double runtime = static_cast<double>(csv.integer(9, "deletion_time")) -
                               static_cast<double>(csv.integer(10, "scheduled_time"));
        if (runtime >= 0) jb.set_times(runtime, std::numeric_limits<double>::quiet_NaN());
      }
      for (const auto& [attr, field, name] :
           {std::tuple{a_cpu, size_t{1}, "cpu_milli"}, {a_mem, size_t{2}, "memory_mib"}}) {
        try {
          jb.set_amount(attr, static_cast<double>(csv.integer(field, name)));
        } catch (const ValueError& e) {
          csv.fail(name, e.what());
        }
      }
      const int64_t num_gpu = csv.integer(3, "num_gpu");
      const int64_t gpu_milli = csv.integer(4, "gpu_milli");
      if (num_gpu < 0 || gpu_milli < 0) csv.fail("num_gpu", "negative GPU request");
      Request req;  // AND of the clauses below
      if (num_gpu > 0) {
        jb.set_amount(a_gpum, static_cast<double>(num_gpu) * static_cast<double>(gpu_milli));
        Request c;
        c.kind = Request::Kind::Clause;
        c.clause = Clause{a_gpu, Relop::GE, {static_cast<double>(num_gpu)}, {}};
        req.kids.push_back(std::move(c));
      }
      if (csv.f.size() > 5 && !csv.f[5].empty()) {
        Request c;
        c.kind = Request::Kind::Clause;
        c.clause.attr = a_model;
        c.clause.op = Relop::EQ;
        std::string_view spec = csv.f[5];
        for (size_t start = 0;;) {
          const size_t bar = spec.find('|', start);
          c.clause.strs.emplace_back(spec.substr(start, bar == std::string_view::npos ? bar : bar - start));
          if (bar == std::string_view::npos) break;
          start = bar + 1;
        }
        req.kids.push_back(std::move(c));
      }
      if (!req.kids.empty()) jb.set_request(std::move(req));
    }
    ds.jobs = std::move(jb).build();
  }
  return ds;
}

}  // namespace colmatch::loaders
