// colmatch_bench: every kernel against its scalar twin, eligibility per clause kind, and the
// end-to-end columnar path against the naive row-by-row matcher on the same data in the same run.
// Results are checked against the reference before timing (as simdjson's benchmarks do).
#include <unistd.h>
#include <algorithm>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>
#include <simdjson.h>

#include <benchmark/benchmark.h>

#include "datasets/synth/synthetic.hpp"
#include "engine/batch/matcher.hpp"
#include "engine/schedule/simulation.hpp"
#include "kernels/kernels.hpp"
#include "loaders/swf.hpp"
#include "loaders/traces.hpp"
#include "loaders/vov.hpp"
#include "loaders/vov_tcl.hpp"
#include "loaders/writers/results.hpp"
#include "tests/reference/naive_matcher.hpp"
#include "tests/reference/naive_simulator.hpp"
#include "tests/reference/naive_vov.hpp"

using namespace colmatch;

namespace {

// ---------------------------------------------------------------- kernels, per instruction set
std::vector<double> random_doubles(size_t n) {
  std::mt19937_64 rng(1);
  std::vector<double> v(n);
  for (auto& x : v) x = static_cast<double>(rng() % 64);
  return v;
}
std::vector<uint32_t> random_ids(size_t n, uint32_t dict) {
  std::mt19937_64 rng(2);
  std::vector<uint32_t> v(n);
  for (auto& x : v) x = static_cast<uint32_t>(rng() % dict);
  return v;
}

void check_same(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b, benchmark::State& st) {
  if (a != b) st.SkipWithError("kernel disagrees with its scalar twin");
}

void BM_CmpF64(benchmark::State& st, kernels::Isa isa) {
  const size_t n = static_cast<size_t>(st.range(0));
  const auto col = random_doubles(n);
  std::vector<uint64_t> out(kernels::words_for(n)), ref(out.size());
  const auto& k = *kernels::table_for(isa);
  k.cmp_f64(col.data(), n, kernels::CmpOp::GE, 31.5, out.data());
  kernels::table_for(kernels::Isa::Scalar)->cmp_f64(col.data(), n, kernels::CmpOp::GE, 31.5, ref.data());
  check_same(out, ref, st);
  for (auto _ : st) {
    k.cmp_f64(col.data(), n, kernels::CmpOp::GE, 31.5, out.data());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * n));
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations() * n * sizeof(double)));
}

void BM_EqU32(benchmark::State& st, kernels::Isa isa) {
  const size_t n = static_cast<size_t>(st.range(0));
  const auto ids = random_ids(n, 16);
  std::vector<uint64_t> out(kernels::words_for(n)), ref(out.size());
  const auto& k = *kernels::table_for(isa);
  k.eq_u32(ids.data(), n, 3, out.data());
  kernels::table_for(kernels::Isa::Scalar)->eq_u32(ids.data(), n, 3, ref.data());
  check_same(out, ref, st);
  for (auto _ : st) {
    k.eq_u32(ids.data(), n, 3, out.data());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * n));
}

void BM_LutU32(benchmark::State& st, kernels::Isa isa) {
  const size_t n = static_cast<size_t>(st.range(0));
  const auto ids = random_ids(n, 1000);
  std::vector<uint32_t> lut(1000);
  for (size_t i = 0; i < lut.size(); ++i) lut[i] = (i % 7 == 0) ? 0xFFFFFFFFu : 0;
  std::vector<uint64_t> out(kernels::words_for(n)), ref(out.size());
  const auto& k = *kernels::table_for(isa);
  k.lut_u32(ids.data(), n, lut.data(), lut.size(), out.data());
  kernels::table_for(kernels::Isa::Scalar)->lut_u32(ids.data(), n, lut.data(), lut.size(), ref.data());
  check_same(out, ref, st);
  for (auto _ : st) {
    k.lut_u32(ids.data(), n, lut.data(), lut.size(), out.data());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * n));
}

void BM_Bits32U32(benchmark::State& st, kernels::Isa isa) {
  const size_t n = static_cast<size_t>(st.range(0));
  const auto ids = random_ids(n, 32);
  std::vector<uint64_t> out(kernels::words_for(n)), ref(out.size());
  const auto& k = *kernels::table_for(isa);
  k.bits32_u32(ids.data(), n, 0x10204081u, out.data());
  kernels::table_for(kernels::Isa::Scalar)->bits32_u32(ids.data(), n, 0x10204081u, ref.data());
  check_same(out, ref, st);
  for (auto _ : st) {
    k.bits32_u32(ids.data(), n, 0x10204081u, out.data());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * n));
}

void BM_AndWords(benchmark::State& st, kernels::Isa isa) {
  const size_t nw = kernels::words_for(static_cast<size_t>(st.range(0)));
  std::vector<uint64_t> a(nw, ~0ULL), b(nw, 0x5555555555555555ULL);
  const auto& k = *kernels::table_for(isa);
  for (auto _ : st) {
    k.and_words(a.data(), b.data(), nw);
    benchmark::DoNotOptimize(a.data());
    benchmark::ClobberMemory();
  }
  st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * nw * 64));
}

void BM_Popcount(benchmark::State& st, kernels::Isa isa) {
  const size_t nw = kernels::words_for(static_cast<size_t>(st.range(0)));
  std::vector<uint64_t> a(nw, 0x5555555555555555ULL);
  const auto& k = *kernels::table_for(isa);
  uint64_t c = 0;
  for (auto _ : st) benchmark::DoNotOptimize(c += k.popcount(a.data(), nw));
  st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * nw * 64));
}

// ---------------------------------------------------------------- eligibility per clause kind
// One category = one clause over 10k taskers (the synthetic catalog); items = tasker x clause evaluations.
struct EligibilityFarm {
  loaders::Dataset ds = [] {
    synth::SynthSpec s;
    s.taskers = 10000;
    s.jobs = 1;
    s.categories = 1;
    return synth::generate(s);
  }();
};
const EligibilityFarm& eligibility_farm() {
  static const EligibilityFarm f;
  return f;
}

void BM_Eligibility(benchmark::State& st, const char* request, GridEngineReading reading) {
  const auto& ds = eligibility_farm().ds;
  Catalog catalog = ds.catalog;  // the same farm, its requests read as `reading` says
  catalog.reading = reading;
  const Request r = parse_request(request, catalog);
  const std::vector<double> need(ds.catalog.consumables().size(), 0);
  std::vector<uint64_t> out(kernels::words_for(ds.taskers.size()));
  const auto& k = kernels::active();
  size_t clauses = 0;
  for (uint32_t a : mentioned_attributes(r)) clauses += a < ds.catalog.size();
  for (auto _ : st) {
    eligible_words(ds.catalog, ds.taskers, r, need, k, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * ds.taskers.size()));
  st.SetLabel(request);
}

// Hierarchy: the same int attribute on one level (queue) and on three (global, host, queue), and a
// string attribute on the host level only; 10,000 taskers on 2,500 hosts.
struct LevelFarm {
  Catalog cat;
  TaskerTable flat, levels;
  LevelFarm() {
    AttributeDef c;
    c.name = "cores";
    c.type = AttrType::Int;
    c.relop = Relop::LE;
    const uint32_t cores = cat.add(c);
    AttributeDef a;
    a.name = "arch";
    const uint32_t arch = cat.add(a);
    std::mt19937_64 rng(3);
    const char* archs[] = {"lx-amd64", "lx-arm64", "sol-sparc64"};
    TaskerBuilder fb(cat), lb(cat);
    lb.set_global(cores, "64");
    for (uint32_t h = 0; h < 2500; ++h) {
      const int host_cores = 8 << (rng() % 4);  // 8..64
      const uint32_t hid = lb.add_host("node" + std::to_string(h));
      lb.set_host(hid, cores, std::to_string(host_cores));
      lb.set_host(hid, arch, archs[rng() % 3], ValueKind::Load);
      for (int q = 0; q < 4; ++q) {
        const std::string name = "q" + std::to_string(q) + "@node" + std::to_string(h);
        const int queue_cores = host_cores >> (rng() % 3);
        fb.add(name);
        fb.set(cores, std::to_string(queue_cores));
        fb.set(arch, archs[rng() % 3]);
        lb.add(name, 1, hid);
        lb.set(cores, std::to_string(queue_cores));
      }
    }
    flat = std::move(fb).build();
    levels = std::move(lb).build();
  }
};
const LevelFarm& level_farm() {
  static const LevelFarm f;
  return f;
}

void BM_EligibilityLevels(benchmark::State& st, bool hierarchy, const char* request) {
  const LevelFarm& f = level_farm();
  const TaskerTable& t = hierarchy ? f.levels : f.flat;
  const Request r = parse_request(request, f.cat);
  const std::vector<double> need;
  std::vector<uint64_t> out(kernels::words_for(t.size()));
  for (auto _ : st) {
    eligible_words(f.cat, t, r, need, kernels::active(), out.data());
    benchmark::DoNotOptimize(out.data());
  }
  st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * t.size()));
  st.SetLabel(std::string(hierarchy ? "global+host+queue: " : "queue only: ") + request);
}

// ---------------------------------------------------------------- end to end
const loaders::Dataset& synthetic(size_t jobs, size_t taskers, size_t categories) {
  static std::map<std::tuple<size_t, size_t, size_t>, loaders::Dataset> cache;
  auto key = std::make_tuple(jobs, taskers, categories);
  auto it = cache.find(key);
  if (it == cache.end()) {
    synth::SynthSpec s;
    s.jobs = jobs;
    s.taskers = taskers;
    s.categories = categories;
    s.seed = 2026;
    it = cache.emplace(key, synth::generate(s)).first;
  }
  return it->second;
}

// The Google 2011 slice (part 0 of the task events) from $COLMATCH_RAW or ../shared/datasets/raw, loaded
// once for `mode`; nullptr when the files are not there.
const loaders::Dataset* load_google_once(loaders::LoadMode mode) {
  const char* raw = std::getenv("COLMATCH_RAW");
  const std::string base = raw ? raw : std::string(COLMATCH_SOURCE_DIR) + "/../shared/datasets/raw";
  const std::string m = base + "/google-clusterdata-2011-2/machine_events/part-00000-of-00001.csv.gz";
  const std::string t = base + "/google-clusterdata-2011-2/task_events/part-00000-of-00500.csv.gz";
  if (!std::filesystem::exists(m) || !std::filesystem::exists(t)) return nullptr;
  return new loaders::Dataset(loaders::load_google2011(m, t, std::nullopt, {}, mode));
}

const loaders::Dataset* google_trace() {
  static const loaders::Dataset* ds = load_google_once(loaders::LoadMode::Snapshot);
  return ds;
}

// The same slice loaded for `simulate`: every machine of the slice with its ADD, REMOVE and UPDATE events.
const loaders::Dataset* google_trace_over_time() {
  static const loaders::Dataset* ds = load_google_once(loaders::LoadMode::OverTime);
  return ds;
}

void report(benchmark::State& st, const loaders::Dataset& ds, uint64_t assigned, size_t categories) {
  st.counters["jobs"] = static_cast<double>(ds.jobs.size());
  st.counters["taskers"] = static_cast<double>(ds.taskers.size());
  st.counters["categories"] = static_cast<double>(categories);
  st.counters["assigned"] = static_cast<double>(assigned);
  st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * ds.jobs.size()));
}

void columnar(benchmark::State& st, const loaders::Dataset& ds) {
  MatchOutcome m;
  for (auto _ : st) {
    m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
    benchmark::DoNotOptimize(m.dispatch.assigned);
  }
  st.counters["categorize_s"] = m.timings.categorize_s;
  st.counters["eligibility_s"] = m.timings.eligibility_s;
  st.counters["dispatch_s"] = m.timings.dispatch_s;
  report(st, ds, m.dispatch.assigned, m.categories.size());
}

void naive_run(benchmark::State& st, const loaders::Dataset& ds) {
  naive::Result r;
  for (auto _ : st) {
    r = naive::run(ds.catalog, ds.taskers, ds.jobs);
    benchmark::DoNotOptimize(r.tasker.data());
  }
  uint64_t assigned = 0;
  for (auto s : r.status) assigned += s == JobStatus::Assigned;
  // the two paths must agree before their times mean anything
  const auto m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  if (m.dispatch.tasker != r.tasker) st.SkipWithError("columnar and naive results differ");
  report(st, ds, assigned, m.categories.size());
}

void BM_EndToEnd_Columnar(benchmark::State& st) {
  columnar(st, synthetic(static_cast<size_t>(st.range(0)), static_cast<size_t>(st.range(1)),
                         static_cast<size_t>(st.range(2))));
}
void BM_EndToEnd_Naive(benchmark::State& st) {
  naive_run(st, synthetic(static_cast<size_t>(st.range(0)), static_cast<size_t>(st.range(1)),
                          static_cast<size_t>(st.range(2))));
}
void BM_Google_Columnar(benchmark::State& st) {
  if (const auto* ds = google_trace()) columnar(st, *ds);
  else st.SkipWithError("Google trace not found (set COLMATCH_RAW)");
}
void BM_Google_Naive(benchmark::State& st) {
  if (const auto* ds = google_trace()) naive_run(st, *ds);
  else st.SkipWithError("Google trace not found (set COLMATCH_RAW)");
}

// ---- colmatch simulate -------------------------------------------------------------------------------

const loaders::Dataset& kth_sample() {
  static const loaders::Dataset ds =
      loaders::load_swf(std::string(COLMATCH_SOURCE_DIR) + "/datasets/samples/kth_sp2_head3000.swf.gz");
  return ds;
}

// The first `jobs` jobs of the KTH sample (by submit time) with EASY backfill: `until` stops at the
// submit time of job `jobs`, so both simulators see the same trace.
SimConfig kth_policy(size_t jobs) {
  SimConfig p;
  p.backfill = BackfillPolicy::Easy;
  const auto& ds = kth_sample();
  p.until = ds.jobs.submit[std::min(jobs, ds.jobs.size()) - 1];
  return p;
}

// Runs the engine's simulation while the benchmark loop lasts and reports what it did: jobs started,
// cycles, and the per-cycle time distribution of the last run.
void engine_simulation(benchmark::State& state, const loaders::Dataset& ds, const SimConfig& p) {
  SimResult r;
  for (auto _ : state) r = simulate(ds.catalog, ds.taskers, ds.jobs, p, kernels::active(), ds.farm);
  uint64_t started = 0;
  for (double x : r.start) started += !std::isnan(x);
  state.counters["started"] = static_cast<double>(started);
  state.counters["cycles"] = static_cast<double>(r.cycles);
  std::vector<double> c(r.cycle_seconds.begin(), r.cycle_seconds.end());
  std::sort(c.begin(), c.end());
  if (!c.empty()) {
    state.counters["cycle_p50_us"] = c[c.size() / 2] * 1e6;
    state.counters["cycle_p99_us"] = c[c.size() * 99 / 100] * 1e6;
    state.counters["cycle_max_us"] = c.back() * 1e6;
  }
}

// The same with the naive reference simulator; its start times must equal the engine's before its
// time means anything.
void naive_simulation(benchmark::State& state, const loaders::Dataset& ds, const SimConfig& p) {
  const SimResult fast = simulate(ds.catalog, ds.taskers, ds.jobs, p, kernels::active(), ds.farm);
  naive::SimOutcome r;
  for (auto _ : state) r = naive::simulate(ds.catalog, ds.taskers, ds.jobs, p, ds.farm);
  for (uint32_t j = 0; j < ds.jobs.size(); ++j)
    if (!(std::isnan(r.start[j]) && std::isnan(fast.start[j])) && r.start[j] != fast.start[j]) {
      state.SkipWithError("the naive simulator disagrees with the engine");
      return;
    }
}

void BM_Simulate_Kth(benchmark::State& state) {
  engine_simulation(state, kth_sample(), kth_policy(static_cast<size_t>(state.range(0))));
}

void BM_Simulate_Kth_Naive(benchmark::State& state) {
  naive_simulation(state, kth_sample(), kth_policy(static_cast<size_t>(state.range(0))));
}

// FBSNG on the KTH sample given three queues by size (q1: 1 processor, q2: 2-16, q3: more, as
// bench/fbsng_replay.sh does to the full logs): queues take turns, the large-job queue holds the others
// when stuck (QPG 1), SPG 50; the first `jobs` jobs as kth_policy cuts them.
const loaders::Dataset& kth_three_queues() {
  static const loaders::Dataset ds = [] {
    loaders::Dataset d =
        loaders::load_swf(std::string(COLMATCH_SOURCE_DIR) + "/datasets/samples/kth_sp2_head3000.swf.gz");
    for (uint32_t j = 0; j < d.jobs.size(); ++j) {
      const uint32_t p = d.jobs.slots[j];
      d.jobs.queue.set(j, d.jobs.queues.intern(p <= 1 ? "q1" : p <= 16 ? "q2" : "q3"));
    }
    return d;
  }();
  return ds;
}

SimConfig kth_fbsng(size_t jobs) {
  SimConfig p;
  p.scheduler = SchedulerKind::Fbsng;
  p.min_interval = 5;
  p.fbsng.defaults.qpg = 100;
  p.fbsng.defaults.spg = 50;
  FbsngQueue large = p.fbsng.defaults;
  large.name = "q3";
  large.qpg = 1;
  p.fbsng.queues = {large};
  p.until = kth_policy(jobs).until;
  return p;
}

void BM_Simulate_Kth_Fbsng(benchmark::State& state) {
  engine_simulation(state, kth_three_queues(), kth_fbsng(static_cast<size_t>(state.range(0))));
}

void BM_Simulate_Kth_Fbsng_Naive(benchmark::State& state) {
  naive_simulation(state, kth_three_queues(), kth_fbsng(static_cast<size_t>(state.range(0))));
}

// The Google 2011 slice (190,926 tasks, 12,480 machine rows) with its machine events applied during the
// run, EASY backfill. Arg: keep every Nth task (1: the whole slice; the trace starts with 144k tasks
// submitted at time 0, so a time cut cannot make it small enough for the naive simulator).
const loaders::Dataset* google_over_time_every(size_t stride) {
  static std::map<size_t, loaders::Dataset> cache;
  const auto* full = google_trace_over_time();
  if (!full || stride <= 1) return full;
  auto it = cache.find(stride);
  if (it == cache.end()) {
    loaders::Dataset ds;
    ds.catalog = full->catalog;
    ds.taskers = full->taskers;
    ds.farm = full->farm;
    const JobTable& all = full->jobs;
    JobBuilder jb(ds.catalog);
    for (uint32_t j = 0; j < all.size(); j += static_cast<uint32_t>(stride)) {
      jb.add(all.id[j], all.owners.value(all.owner[j]), all.groups.value(all.group[j]), all.priority[j], all.submit[j],
             all.slots[j]);
      for (size_t k = 0; k < ds.catalog.consumables().size(); ++k)
        if (!std::isnan(all.amount.at(k, j))) jb.set_amount(ds.catalog.consumables()[k], all.amount.at(k, j));
      jb.set_times(all.runtime[j], all.walltime[j]);
    }
    ds.jobs = std::move(jb).build();
    it = cache.emplace(stride, std::move(ds)).first;
  }
  return &it->second;
}

SimConfig easy_backfill() {
  SimConfig p;
  p.backfill = BackfillPolicy::Easy;
  return p;
}

void BM_Simulate_Google(benchmark::State& state) {
  if (const auto* ds = google_over_time_every(static_cast<size_t>(state.range(0)))) {
    engine_simulation(state, *ds, easy_backfill());
    state.counters["farm_events"] = static_cast<double>(ds->farm.events.size());
  } else {
    state.SkipWithError("Google trace not found (set COLMATCH_RAW)");
  }
}

void BM_Simulate_Google_Naive(benchmark::State& state) {
  if (const auto* ds = google_over_time_every(static_cast<size_t>(state.range(0))))
    naive_simulation(state, *ds, easy_backfill());
  else state.SkipWithError("Google trace not found (set COLMATCH_RAW)");
}

// The cost of one cycle as the queue grows: one job holds the whole farm (100 taskers) for ever, N jobs
// wait, and one more arrives at t = 2; the benchmark reports the time of that cycle alone (manual time,
// from the per-cycle times the result records). A job arriving at t = 3 makes the t = 2 cycle one that
// is not the run's last (the last one visits every job to report its reason): `full` runs every cycle
// over every waiting job (SimConfig::full_cycles), for the ratio.
void BM_SimCycle_Queue(benchmark::State& state) {
  const size_t queued = static_cast<size_t>(state.range(0));
  static std::map<size_t, loaders::Dataset> farms;
  auto& ds = farms[queued];
  if (ds.taskers.size() == 0) {
    const uint32_t slots = ds.catalog.add(consumable_attribute("slots", AttrType::Int));
    TaskerBuilder tb(ds.catalog);
    for (int i = 0; i < 100; ++i) {
      tb.add("t" + std::to_string(i));
      tb.set_number(slots, 1);
    }
    ds.taskers = std::move(tb).build();
    JobBuilder jb(ds.catalog);
    jb.add("holder", "u", "g", 0, 0, 100);
    jb.set_rule(AllocationRule::FillUp);
    jb.set_times(1e12, NAN);
    for (size_t i = 0; i < queued; ++i) {
      jb.add("w" + std::to_string(i), "u" + std::to_string(i % 50), "g", 0, 1, 1 + i % 8);  // all at t = 1
      jb.set_rule(AllocationRule::FillUp);
      jb.set_times(100, 100);
    }
    jb.add("last", "u", "g", 0, 2, 1);
    jb.set_times(100, 100);
    jb.add("after", "u", "g", 0, 3, 1);
    jb.set_times(100, 100);
    ds.jobs = std::move(jb).build();
  }
  SimConfig p;
  p.backfill = BackfillPolicy::Easy;
  p.until = 3;  // cycles at t = 0 (the holder starts), 1 (the queue arrives), 2 (one more job), 3
  p.full_cycles = state.range(1) != 0;
  double last_cycle = 0;
  for (auto _ : state) {
    const SimResult r = simulate(ds.catalog, ds.taskers, ds.jobs, p, kernels::active());
    last_cycle = r.cycle_seconds.at(2);  // the cycle at t = 2: `queued` jobs wait, one arrives
    state.SetIterationTime(last_cycle);
  }
  state.counters["queued"] = static_cast<double>(queued);
  state.counters["last_cycle_us"] = last_cycle * 1e6;
}

// An Altair Accelerator farm (issue 10) in $COLMATCH_VOV_FARM: taskers.tcl, resources.tcl, jobs.jsonl as
// datasets/vov_farm.py writes them (python3 datasets/vov_farm.py DIR: 10k taskers, 200 maps, 1M jobs over
// 1k lists). Loaded once; the same files read plainly for the naive path.
struct VovFarm {
  std::string dir;
  loaders::Dataset ds;
  std::vector<naive::VovTasker> taskers;
  std::map<std::string, naive::VovMap> maps;
  std::vector<naive::VovJob> jobs;
};

const VovFarm* vov_farm() {
  static const VovFarm* farm = []() -> const VovFarm* {
    const char* dir = std::getenv("COLMATCH_VOV_FARM");
    if (dir == nullptr || !std::filesystem::exists(std::string(dir) + "/jobs.jsonl")) return nullptr;
    auto* f = new VovFarm;
    f->dir = dir;
    const std::string t = f->dir + "/taskers.tcl", r = f->dir + "/resources.tcl", j = f->dir + "/jobs.jsonl";
    f->ds = loaders::load_vov(t, r, j);
    for (const auto& d : loaders::read_vov_tcl(t).taskers) f->taskers.push_back({d.name, d.resources, d.cpus, d.power});
    for (const auto& m : loaders::read_vov_tcl(r).maps) f->maps[m.name] = {m.count, m.map};
    simdjson::dom::parser parser;
    std::ifstream in(j);
    for (std::string line; std::getline(in, line);) {
      const simdjson::dom::element doc = parser.parse(line);
      naive::VovJob job;
      auto str = [&](const char* key) {
        std::string_view v;
        return doc[key].get_string().get(v) ? std::string() : std::string(v);
      };
      job.id = str("id");
      job.resources = str("resources");
      job.command = str("command");
      job.owner = str("owner");
      job.group = str("group");
      job.priority = str("priority");
      double d = 0;
      if (!doc["expected_duration"].get_double().get(d)) job.expected_duration = d;
      f->jobs.push_back(std::move(job));
    }
    return f;
  }();
  return farm;
}

// The columnar match of the whole farm (categorize, eligibility, dispatch; the expansion was done at
// load, once per distinct list, tool, owner, group, priority and duration).
void BM_Vov_Columnar(benchmark::State& st) {
  if (const VovFarm* f = vov_farm()) columnar(st, f->ds);
  else st.SkipWithError("no Accelerator farm (set COLMATCH_VOV_FARM; python3 datasets/vov_farm.py DIR)");
}

// Expansion as the loader does it: one per distinct key, shared by the jobs with that key.
void BM_Vov_ExpandPerKey(benchmark::State& st) {
  const VovFarm* f = vov_farm();
  if (f == nullptr) return st.SkipWithError("no Accelerator farm (set COLMATCH_VOV_FARM)");
  std::map<std::string, vov::ResourceMap, std::less<>> maps;
  for (const auto& [name, m] : f->maps)
    maps[name] = {m.count, m.map ? std::optional(vov::parse_resources(*m.map)) : std::nullopt};
  size_t distinct = 0;
  for (auto _ : st) {
    std::unordered_map<std::string, uint32_t> seen;
    std::vector<vov::Expansion> exp;
    for (const naive::VovJob& j : f->jobs) {
      const std::string key = fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", j.resources, vov::tool_of(j.command),
                                          j.owner, j.group, j.priority, std::ceil(j.expected_duration));
      if (!seen.emplace(key, static_cast<uint32_t>(exp.size())).second) continue;
      exp.push_back(vov::expand({j.resources, j.command, j.owner, j.group, j.priority, j.expected_duration}, maps,
                                [](std::string_view, double) { return true; }));
    }
    distinct = exp.size();
    benchmark::DoNotOptimize(exp.data());
  }
  st.counters["expansions"] = static_cast<double>(distinct);
  st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * f->jobs.size()));
}

// Expansion job by job (the engine's expander, no sharing): every job of the farm.
void BM_Vov_ExpandPerJob(benchmark::State& st) {
  const VovFarm* f = vov_farm();
  if (f == nullptr) return st.SkipWithError("no Accelerator farm (set COLMATCH_VOV_FARM)");
  std::map<std::string, vov::ResourceMap, std::less<>> maps;
  for (const auto& [name, m] : f->maps)
    maps[name] = {m.count, m.map ? std::optional(vov::parse_resources(*m.map)) : std::nullopt};
  for (auto _ : st) {
    size_t tokens = 0;
    for (const naive::VovJob& j : f->jobs)
      tokens += vov::expand({j.resources, j.command, j.owner, j.group, j.priority, j.expected_duration}, maps,
                            [](std::string_view, double) { return true; })
                    .expanded.kids.size();
    benchmark::DoNotOptimize(tokens);
  }
  st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * f->jobs.size()));
}

// The whole of `colmatch match --format vov` but the process: load the Tcl files and the 175 MB jobs.jsonl
// (parse, kinds, expansion per kind, the job table), match (categorize, eligibility, dispatch, with
// categories.csv formatted beside dispatch as the CLI does), write results.csv, categories.csv and
// summary.json (fsynced) into a temporary folder. Counters: load, match and write seconds of the last
// iteration. Each iteration starts once the last one's files are written back (sync, not timed), as
// two runs of the CLI some time apart: without it an iteration's fsync waits on the last one's writeback.
void BM_Vov_WholeMatch(benchmark::State& st) {
  const char* dir = std::getenv("COLMATCH_VOV_FARM");
  if (dir == nullptr) return st.SkipWithError("no Accelerator farm (set COLMATCH_VOV_FARM)");
  const std::string d(dir);
  const std::string out = std::filesystem::temp_directory_path() / "colmatch-bench-vov-whole";
  double load_s = 0, match_s = 0, write_s = 0;
  for (auto _ : st) {
    st.PauseTiming();  // the last iteration's 147 MB written back first, as between two runs of the CLI
    ::sync();
    st.ResumeTiming();
    const auto t0 = std::chrono::steady_clock::now();
    const loaders::Dataset ds = loaders::load_vov(d + "/taskers.tcl", d + "/resources.tcl", d + "/jobs.jsonl");
    const auto t1 = std::chrono::steady_clock::now();
    std::string categories;  // as the CLI: categories.csv formatted beside dispatch
    const MatchOutcome m =
        run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active(),
                  [&](const MatchOutcome& so_far) { categories = writers::categories_csv(ds, so_far); });
    const auto t2 = std::chrono::steady_clock::now();
    writers::RunInfo info;
    info.format = "vov";
    writers::write_results(out, ds, m, info, std::move(categories));
    const auto t3 = std::chrono::steady_clock::now();
    load_s = std::chrono::duration<double>(t1 - t0).count();
    match_s = std::chrono::duration<double>(t2 - t1).count();
    write_s = std::chrono::duration<double>(t3 - t2).count();
  }
  std::filesystem::remove_all(out);
  st.counters["load_s"] = load_s;
  st.counters["match_s"] = match_s;
  st.counters["write_s"] = write_s;
}

// The naive per-job expander and matcher (tests/reference/naive_vov) on every `range(0)`th job over all
// the taskers; `per_job_s` times the farm's job count is its whole-farm estimate. Its outcomes are
// checked against the columnar path on the same sample (written out and loaded) before they count.
void BM_Vov_NaiveSample(benchmark::State& st) {
  const VovFarm* f = vov_farm();
  if (f == nullptr) return st.SkipWithError("no Accelerator farm (set COLMATCH_VOV_FARM)");
  std::vector<naive::VovJob> sample;
  for (size_t j = 0; j < f->jobs.size(); j += static_cast<size_t>(st.range(0))) sample.push_back(f->jobs[j]);
  naive::VovOutcome ref;
  for (auto _ : st) {
    ref = naive::vov_match(f->taskers, f->maps, {}, sample);
    benchmark::DoNotOptimize(ref.tasker.data());
  }
  const std::string sample_path = std::filesystem::temp_directory_path() / "colmatch-bench-vov-sample.jsonl";
  {
    std::ofstream out(sample_path);
    for (const naive::VovJob& j : sample)
      out << fmt::format(
          "{{\"id\": \"{}\", \"resources\": \"{}\", \"command\": \"{}\", \"owner\": \"{}\", \"group\": \"{}\", "
          "\"priority\": \"{}\", \"expected_duration\": {}}}\n",
          j.id, j.resources, j.command, j.owner, j.group, j.priority, j.expected_duration);
  }
  const loaders::Dataset ds = loaders::load_vov(f->dir + "/taskers.tcl", f->dir + "/resources.tcl", sample_path);
  std::filesystem::remove(sample_path);
  const MatchOutcome m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
    const bool assigned = m.dispatch.status[j] == JobStatus::Assigned;
    if (assigned != (ref.status[j] == "assigned") ||
        (assigned && ds.taskers.names[m.dispatch.tasker[j]] != ref.tasker[j]))
      return st.SkipWithError("columnar and naive results differ on the sample");
  }
  st.counters["sample_jobs"] = static_cast<double>(sample.size());
  st.counters["per_job_us"] =
      benchmark::Counter(static_cast<double>(sample.size()) * 1e-6,
                         benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * sample.size()));
}

int register_all() {
  for (kernels::Isa isa : kernels::usable_isas()) {
    const std::string n(kernels::isa_name(isa));
    benchmark::RegisterBenchmark(("BM_CmpF64/" + n).c_str(), BM_CmpF64, isa)->Arg(10000)->Arg(1 << 20);
    benchmark::RegisterBenchmark(("BM_EqU32/" + n).c_str(), BM_EqU32, isa)->Arg(10000)->Arg(1 << 20);
    benchmark::RegisterBenchmark(("BM_LutU32/" + n).c_str(), BM_LutU32, isa)->Arg(10000)->Arg(1 << 20);
    benchmark::RegisterBenchmark(("BM_Bits32U32/" + n).c_str(), BM_Bits32U32, isa)->Arg(10000)->Arg(1 << 20);
    benchmark::RegisterBenchmark(("BM_AndWords/" + n).c_str(), BM_AndWords, isa)->Arg(1 << 20);
    benchmark::RegisterBenchmark(("BM_Popcount/" + n).c_str(), BM_Popcount, isa)->Arg(1 << 20);
  }
  for (const char* r : {"cores>=16", "speed>2.5", "arch==lx-amd64", "arch=={lx-amd64,lx-arm64}", "os==rhel8",
                        "site==\"*.ch|*.fr\"", "hostname==node00042.farm", "cores>=16 && speed>2.5 && ssd==true",
                        "!(arch==lx-amd64) || (mem_total>=64G && walltime>=24:00:00)"})
    benchmark::RegisterBenchmark("BM_Eligibility", BM_Eligibility, r, GridEngineReading::Design60);
  // Son of Grid Engine 8.1.9 wildcard expressions (issue 8): the restring pattern above read as an
  // expression, and operators on string and cstring attributes
  for (const char* r : {"site==\"*.ch|*.fr\"", "arch==\"lx-*&!*64\"", "os==\"!rhel*\"", "arch==\"(lx-*|sol*)&![^l]*\""})
    benchmark::RegisterBenchmark("BM_Eligibility819", BM_Eligibility, r, GridEngineReading::SoGE819);
  benchmark::RegisterBenchmark("BM_EligibilityLevels/flat_int", BM_EligibilityLevels, false, "cores>=16");
  benchmark::RegisterBenchmark("BM_EligibilityLevels/hierarchy_int", BM_EligibilityLevels, true, "cores>=16");
  benchmark::RegisterBenchmark("BM_EligibilityLevels/flat_string", BM_EligibilityLevels, false, "arch==lx-amd64");
  benchmark::RegisterBenchmark("BM_EligibilityLevels/host_string", BM_EligibilityLevels, true, "arch==lx-amd64");
  benchmark::RegisterBenchmark("BM_EndToEnd_Columnar", BM_EndToEnd_Columnar)
      ->Args({20000, 10000, 1000})
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_EndToEnd_Naive", BM_EndToEnd_Naive)
      ->Args({20000, 10000, 1000})
      ->Unit(benchmark::kMillisecond)
      ->Iterations(1);
  benchmark::RegisterBenchmark("BM_EndToEnd_Columnar", BM_EndToEnd_Columnar)
      ->Args({1000000, 10000, 1000})
      ->Unit(benchmark::kMillisecond)
      ->Iterations(3);
  benchmark::RegisterBenchmark("BM_Google_Columnar", BM_Google_Columnar)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_Google_Naive", BM_Google_Naive)->Unit(benchmark::kMillisecond)->Iterations(1);
  benchmark::RegisterBenchmark("BM_Vov_Columnar", BM_Vov_Columnar)->Unit(benchmark::kMillisecond)->Iterations(5);
  benchmark::RegisterBenchmark("BM_Vov_WholeMatch", BM_Vov_WholeMatch)->Unit(benchmark::kMillisecond)->Iterations(3);
  benchmark::RegisterBenchmark("BM_Vov_ExpandPerKey", BM_Vov_ExpandPerKey)
      ->Unit(benchmark::kMillisecond)
      ->Iterations(3);
  benchmark::RegisterBenchmark("BM_Vov_ExpandPerJob", BM_Vov_ExpandPerJob)
      ->Unit(benchmark::kMillisecond)
      ->Iterations(1);
  benchmark::RegisterBenchmark("BM_Vov_NaiveSample", BM_Vov_NaiveSample)
      ->Arg(1000)
      ->Unit(benchmark::kMillisecond)
      ->Iterations(1);
  benchmark::RegisterBenchmark("BM_Simulate_Kth", BM_Simulate_Kth)->Arg(400)->Arg(3000)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_Simulate_Kth_Naive", BM_Simulate_Kth_Naive)
      ->Arg(400)
      ->Unit(benchmark::kMillisecond)
      ->Iterations(1);
  benchmark::RegisterBenchmark("BM_Simulate_Kth_Fbsng", BM_Simulate_Kth_Fbsng)
      ->Arg(400)
      ->Arg(3000)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_Simulate_Kth_Fbsng_Naive", BM_Simulate_Kth_Fbsng_Naive)
      ->Arg(400)
      ->Unit(benchmark::kMillisecond)
      ->Iterations(1);
  benchmark::RegisterBenchmark("BM_Simulate_Google", BM_Simulate_Google)
      ->Arg(1000)
      ->Arg(1)
      ->Unit(benchmark::kMillisecond)
      ->Iterations(1);
  benchmark::RegisterBenchmark("BM_Simulate_Google_Naive", BM_Simulate_Google_Naive)
      ->Arg(1000)
      ->Unit(benchmark::kMillisecond)
      ->Iterations(1);
  benchmark::RegisterBenchmark("BM_SimCycle_Queue", BM_SimCycle_Queue)
      ->ArgNames({"queued", "full"})
      ->Args({1000, 0})
      ->Args({10000, 0})
      ->Args({100000, 0})
      ->Args({1000000, 0})
      ->Args({1000, 1})
      ->Args({10000, 1})
      ->Args({100000, 1})
      ->Args({1000000, 1})
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond)
      ->Iterations(3);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::AddCustomContext("instruction_set", std::string(kernels::isa_name(kernels::active().isa)));
  benchmark::AddCustomContext("datasets", "synthetic seed 2026 (datasets/synth); Google clusterdata-2011-2 part 0");
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
