#include "loaders/traces.hpp"

#include <array>
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

// One machine_events row: time, machine ID, event type, platform, CPUs, memory (empty fields: NaN / "").
struct MachineRow {
  int64_t time, id, event;
  std::string_view platform;
  double cpu, mem;
};

MachineRow read_machine_row(Csv& csv) {
  csv.need(6);
  MachineRow r{csv.integer(0, "time"), csv.integer(1, "machine ID"), csv.integer(2, "event type"), csv.f[3],
               csv.real(4, "CPUs"),    csv.real(5, "Memory")};
  if (r.cpu < 0) csv.fail("CPUs", "a capacity must not be negative");
  if (r.mem < 0) csv.fail("Memory", "a capacity must not be negative");
  if (r.event < 0 || r.event > 2) csv.fail("event type", fmt::format("unknown machine event type {}", r.event));
  if (r.platform.size() > kMaxStringValue)
    csv.fail("platform",
             fmt::format("a value of {} bytes: at most {} are accepted", r.platform.size(), kMaxStringValue));
  return r;
}

// `match`: the machines alive at `at`, each with its attributes then.
void read_machines_at(const std::string& machine_events, int64_t at, Dataset& ds, uint32_t a_cpu, uint32_t a_mem,
                      uint32_t a_plat, const ProgressFn& progress) {
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
      const MachineRow row = read_machine_row(csv);
      if (row.time > at) continue;
      auto [it, fresh] = machines.try_emplace(row.id);
      Machine& m = it->second;
      if (fresh) {
        m.order = static_cast<uint32_t>(first_seen.size());
        first_seen.push_back(row.id);
      }
      switch (row.event) {
        case 0:  // ADD: the machine's attributes as given
          m.alive = true;
          m.platform = std::string(row.platform);
          m.cpu = row.cpu;
          m.mem = row.mem;
          break;
        case 1: m.alive = false; break;  // REMOVE
        default:                         // UPDATE: empty fields keep their value
          if (!row.platform.empty()) m.platform = std::string(row.platform);
          if (!std::isnan(row.cpu)) m.cpu = row.cpu;
          if (!std::isnan(row.mem)) m.mem = row.mem;
          break;
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
}

// `simulate`: every machine that is ever up by `at`, as tasker rows with FarmEvents saying when each is
// up and what its capacities are. A machine whose platform changes, or that gains a capacity it had no
// value for, continues as a new row ("ID#2", ...): what categories matched on it changes, and the
// engine's eligibility is per row. A row's capacity columns hold the largest value it ever has (so
// eligibility holds all its life); Configure events set the amount in force from the row's start.
void read_machines_over_time(const std::string& machine_events, int64_t at, Dataset& ds, uint32_t a_cpu, uint32_t a_mem,
                             uint32_t a_plat, const ProgressFn& progress) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  struct Row {
    int64_t machine;
    uint32_t incarnation;
    std::string platform;
    double cpu_max = kNaN, mem_max = kNaN;
    bool up_at_start = false;
  };
  struct Machine {
    std::string platform;
    double cpu = kNaN, mem = kNaN;
    uint32_t row = UINT32_MAX;  // its current row, if any
    uint32_t rows = 0;          // rows so far
    bool alive = false;
  };
  struct Event {
    double time;
    uint32_t row;
    TaskerEvent::Kind kind;
    uint32_t consumable;
    double amount;
  };
  const auto k_cpu = static_cast<uint32_t>(ds.catalog.consumable_slot(a_cpu));
  const auto k_mem = static_cast<uint32_t>(ds.catalog.consumable_slot(a_mem));
  std::vector<Row> rows;
  std::vector<Event> events;
  std::unordered_map<int64_t, Machine> machines;
  auto same_shape = [](const Row& r, const Machine& m) {
    return r.platform == m.platform && std::isnan(r.cpu_max) == std::isnan(m.cpu) &&
           std::isnan(r.mem_max) == std::isnan(m.mem);
  };
  auto configure = [&](double time, uint32_t row, const Machine& m) {  // the amounts in force from `time`
    Row& r = rows[row];
    if (!std::isnan(m.cpu)) {
      r.cpu_max = std::isnan(r.cpu_max) ? m.cpu : std::max(r.cpu_max, m.cpu);
      events.push_back({time, row, TaskerEvent::Kind::Configure, k_cpu, m.cpu});
    }
    if (!std::isnan(m.mem)) {
      r.mem_max = std::isnan(r.mem_max) ? m.mem : std::max(r.mem_max, m.mem);
      events.push_back({time, row, TaskerEvent::Kind::Configure, k_mem, m.mem});
    }
  };
  auto new_row = [&](int64_t time, int64_t id, Machine& m) {
    m.row = static_cast<uint32_t>(rows.size());
    rows.push_back({id, ++m.rows, m.platform, kNaN, kNaN, time == 0});
    if (time != 0) events.push_back({static_cast<double>(time) / 1e6, m.row, TaskerEvent::Kind::Up, 0, 0});
  };
  {
    LineReader in(machine_events, progress);
    Csv csv{in, {}};
    std::string_view line;
    int64_t last = 0;
    while (in.next(line)) {
      if (line.empty()) continue;
      split_csv(line, csv.f);
      const MachineRow ev = read_machine_row(csv);
      if (ev.time > at) continue;
      if (ev.time < last) csv.fail("time", "machine events must be in time order");
      last = ev.time;
      const double time = static_cast<double>(ev.time) / 1e6;
      Machine& m = machines[ev.id];
      if (ev.event == 1) {  // REMOVE
        if (m.alive && m.row != UINT32_MAX) events.push_back({time, m.row, TaskerEvent::Kind::Down, 0, 0});
        m.alive = false;
        continue;
      }
      if (ev.event == 0) {  // ADD: the attributes as given
        m.platform = std::string(ev.platform);
        m.cpu = ev.cpu;
        m.mem = ev.mem;
      } else {  // UPDATE: empty fields keep their value
        if (!ev.platform.empty()) m.platform = std::string(ev.platform);
        if (!std::isnan(ev.cpu)) m.cpu = ev.cpu;
        if (!std::isnan(ev.mem)) m.mem = ev.mem;
      }
      const bool was_up = m.alive;
      const bool up = ev.event == 0 || m.alive;
      if (m.row != UINT32_MAX && !same_shape(rows[m.row], m)) {  // another row from now on
        if (was_up) events.push_back({time, m.row, TaskerEvent::Kind::Down, 0, 0});
        m.row = UINT32_MAX;
      }
      if (!up) continue;  // an UPDATE of a machine that is down: applied when it comes back
      if (m.row == UINT32_MAX) new_row(ev.time, ev.id, m);
      else if (!was_up) events.push_back({time, m.row, TaskerEvent::Kind::Up, 0, 0});
      configure(time, m.row, m);
      m.alive = true;
    }
  }
  TaskerBuilder tb(ds.catalog);
  for (const Row& r : rows) {
    tb.add(r.incarnation == 1 ? fmt::format("{}", r.machine) : fmt::format("{}#{}", r.machine, r.incarnation),
           std::isnan(r.cpu_max) ? 0.0 : r.cpu_max);
    if (!std::isnan(r.cpu_max)) tb.set_number(a_cpu, r.cpu_max);
    if (!std::isnan(r.mem_max)) tb.set_number(a_mem, r.mem_max);
    if (!r.platform.empty()) tb.set(a_plat, r.platform);
  }
  ds.taskers = std::move(tb).build();
  std::vector<uint32_t> tasker_of(rows.size());  // row (input order) -> tasker (rank order)
  for (uint32_t t = 0; t < ds.taskers.size(); ++t) tasker_of[ds.taskers.input_index[t]] = t;
  ds.farm.down_at_start.assign(rows.size(), 0);
  for (uint32_t r = 0; r < rows.size(); ++r) ds.farm.down_at_start[tasker_of[r]] = rows[r].up_at_start ? 0 : 1;
  // Configure events that leave the amount as it is are dropped (a row starts at its column's value).
  std::vector<std::array<double, 2>> in_force(rows.size());
  for (uint32_t r = 0; r < rows.size(); ++r) in_force[r] = {rows[r].cpu_max, rows[r].mem_max};
  for (const Event& e : events) {
    if (e.kind == TaskerEvent::Kind::Configure) {
      double& was = in_force[e.row][e.consumable == k_cpu ? 0 : 1];
      if (was == e.amount) continue;
      was = e.amount;
    }
    ds.farm.events.push_back({e.time, tasker_of[e.row], e.kind, e.consumable, e.amount});
  }
}
}  // namespace

Dataset load_google2011(const std::string& machine_events, const std::string& task_events, std::optional<int64_t> at_us,
                        const ProgressFn& progress, LoadMode mode) {
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

  if (mode == LoadMode::OverTime) read_machines_over_time(machine_events, at, ds, a_cpu, a_mem, a_plat, progress);
  else read_machines_at(machine_events, at, ds, a_cpu, a_mem, a_plat, progress);

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
      if (!csv.f[4].empty()) {
        try {
          tb.set(a_model, csv.f[4]);
        } catch (const ValueError& e) {
          csv.fail("model", e.what());
        }
      }
    }
    ds.taskers = std::move(tb).build();
  }
  {
    LineReader in(pods, progress);
    Csv csv{in, {}};
    JobBuilder jb(ds.catalog);
    JobIds ids;
    std::string_view line;
    while (in.next(line)) {
      if (line.empty()) continue;
      split_csv(line, csv.f);
      if (in.line() == 1 && csv.f[0] == "name") continue;  // header
      csv.need(5);
      const double submit =
          csv.f.size() > 8 && !csv.f[8].empty() ? static_cast<double>(csv.integer(8, "creation_time")) : 0;
      const std::string qos = csv.f.size() > 6 ? std::string(csv.f[6]) : std::string();
      ids.add(in.path(), in.line(), "name", std::string(csv.f[0]));
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
        if (spec.size() > kMaxStringValue)
          csv.fail("gpu_spec",
                   fmt::format("a value of {} bytes: at most {} are accepted", spec.size(), kMaxStringValue));
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
