// The fast path against the naive reference matcher on thousands of seeded random farms: identical
// eligibility per job and identical dispatch, for every usable instruction set and 1 or 2 threads.
#include <cmath>
#include <random>
#include <set>

#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include "datasets/synth/synthetic.hpp"
#include "engine/batch/matcher.hpp"
#include "tests/engine/model/random_host_rules.hpp"
#include "tests/reference/naive_matcher.hpp"

using namespace colmatch;

namespace {

synth::SynthSpec random_spec(uint64_t seed) {
  std::mt19937_64 rng(seed);
  static const size_t sizes[] = {1, 2, 5, 17, 63, 64, 65, 100, 127, 128, 129, 200, 257};
  synth::SynthSpec s;
  s.seed = seed;
  s.taskers = sizes[rng() % std::size(sizes)];
  s.jobs = 1 + rng() % 150;
  s.categories = 1 + rng() % 40;
  s.missing = (rng() % 4) * 0.1;
  s.max_depth = static_cast<int>(rng() % 3);
  s.zipf_s = (rng() % 3) * 0.7;
  s.with_slots = (rng() % 2) == 0;
  s.levels = (rng() % 2) == 0;
  s.soft = (rng() % 2) ? 0.5 : 0.0;
  s.fill_up = (rng() % 2) ? 0.4 : 0.0;
  s.sge_819 = seed % 3 == 0;                     // Grid Engine 8.1.9 expressions and FORCED attributes (no draw: the
                                                 // other farms stay as they were)
  s.one_per_tasker = seed % 4 == 1 ? 0.5 : 0.0;  // a slot a tasker (allocation_rule 1, Slurm's -N)
  return s;
}

// Job by job in dispatch order, then the rejected ones: the first failure is the first job where the two
// part (by index, a job placed differently after an earlier one that differed only in its allocations
// would be reported first).
void compare(const loaders::Dataset& ds, const MatchOutcome& m, const naive::Result& ref, const std::string& ctx) {
  const JobTable& jobs = ds.jobs;
  std::vector<uint32_t> order = dispatch_order(jobs);
  for (uint32_t j = 0; j < jobs.size(); ++j)
    if (jobs.rejected(j)) order.push_back(j);
  ASSERT_EQ(order.size(), jobs.size());
  for (const uint32_t j : order) {
    ASSERT_EQ(m.dispatch.status[j], ref.status[j]) << ctx << " job " << jobs.id[j];
    ASSERT_EQ(m.dispatch.tasker[j], ref.tasker[j])
        << ctx << " job " << jobs.id[j] << " request " << jobs.request_text[jobs.request[j]];
    ASSERT_EQ(m.dispatch.reason[j], ref.reason[j]) << ctx << " job " << jobs.id[j];
    std::vector<std::pair<uint32_t, uint32_t>> allocs;
    for (uint32_t a = 0; a < m.dispatch.alloc_count[j]; ++a) {
      const Allocation& x = m.dispatch.allocations[m.dispatch.alloc_first[j] + a];
      allocs.emplace_back(x.tasker, x.slots);
    }
    ASSERT_EQ(allocs, ref.allocations[j]) << ctx << " job " << jobs.id[j];
    if (jobs.rejected(j)) continue;
    const auto& set = m.eligible[m.categories.of_job[j]].eligible;
    for (uint32_t t = 0; t < ds.taskers.size(); ++t)
      ASSERT_EQ(set.contains(t), naive::eligible(ds.catalog, ds.taskers, jobs, t, j))
          << ctx << " job " << jobs.id[j] << " tasker " << ds.taskers.names[t] << " request "
          << jobs.request_text[jobs.request[j]];
  }
  for (size_t k = 0; k < ref.free.size(); ++k) {
    // SGE 8.1.9: where a consumable with a default is defined on no level the engine keeps an
    // unbounded pool (default charges take nothing there); the naive matcher keeps the column's 0
    std::vector<double> engine = m.dispatch.capacity.queue_free(k);
    if (engine.empty()) engine.assign(ds.taskers.size(), 0.0);  // no tasker-level pool: a farm-wide one
    const Column& col = ds.taskers.columns[ds.catalog.consumables()[k]];
    for (uint32_t t = 0; t < engine.size(); ++t)
      if (std::isinf(engine[t]) && !col.has(t)) engine[t] = ref.free[k][t];
    ASSERT_EQ(engine, ref.free[k]) << ctx;
    ASSERT_EQ(m.dispatch.capacity.host_free(k), ref.free_host[k]) << ctx;
  }
  for (size_t k = 0; k < ref.free_global.size(); ++k)
    if (!std::isnan(ref.free_global[k])) {
      ASSERT_EQ(m.dispatch.capacity.global_free(k), ref.free_global[k]) << ctx;
    }
}

class Differential : public ::testing::TestWithParam<int> {};

// 8 shards x 250 farms = 2000 random farms, each checked on every instruction set.
TEST_P(Differential, FastPathEqualsNaiveOnRandomFarms) {
  const int shard = GetParam();
  size_t nonempty_eligibility = 0, assigned = 0, sparse_sets = 0, multi_level_columns = 0, soft_tiered = 0, spread = 0;
  size_t expression_steps_narrowing = 0, forced_steps = 0;  // Grid Engine 8.1.9 farms
  size_t one_per_tasker_spread = 0;                         // jobs on several taskers, a slot each
  for (int i = 0; i < 250; ++i) {
    const uint64_t seed = 1000003ULL * static_cast<uint64_t>(shard) + static_cast<uint64_t>(i);
    const auto ds = synth::generate(random_spec(seed));
    const naive::Result ref = naive::run(ds.catalog, ds.taskers, ds.jobs);
    for (kernels::Isa isa : kernels::usable_isas()) {
      const auto m = run_match(ds.catalog, ds.taskers, ds.jobs, *kernels::table_for(isa));
      compare(ds, m, ref, "seed " + std::to_string(seed) + " isa " + std::string(kernels::isa_name(isa)));
      if (isa == kernels::Isa::Scalar) {
        for (const auto& e : m.eligible) {
          const auto& s = e.eligible;
          nonempty_eligibility += s.count() > 0;
          sparse_sets += s.sparse();
        }
        assigned += m.dispatch.assigned;
        for (const auto& col : ds.taskers.columns) multi_level_columns += col.multi_level();
        for (const auto& e : m.eligible) soft_tiered += e.tiers.size() > 1 && e.tiers[1].count() > 0;
        for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
          spread += m.dispatch.alloc_count[j] > 1;
          one_per_tasker_spread += ds.jobs.rule[j] == AllocationRule::OnePerTasker && m.dispatch.alloc_count[j] > 1;
        }
        for (size_t c = 0; c < m.categories.size(); ++c) {
          const Request& r = ds.jobs.requests[m.categories.request[c]];
          for (const EligibilityStep& st : m.eligible[c].steps) {
            forced_steps += st.forced >= 0 && st.pass < ds.taskers.size();
            const Request* term = st.term >= 0        ? &r.kids[static_cast<size_t>(st.term)]
                                  : st.consumable < 0 ? &r
                                                      : nullptr;
            expression_steps_narrowing += term != nullptr && term->kind == Request::Kind::Clause &&
                                          term->clause.expression && st.pass > 0 && st.pass < ds.taskers.size();
          }
        }
      }
    }
  }
  // The farms must exercise the interesting paths, or equality proves little.
  EXPECT_GT(nonempty_eligibility, 100u);
  EXPECT_GT(assigned, 100u);
  EXPECT_GT(sparse_sets, 10u);
  EXPECT_GT(multi_level_columns, 500u) << "farms with host and global levels";
  EXPECT_GT(soft_tiered, 100u) << "categories whose taskers differ in soft violations";
  EXPECT_GT(spread, 20u) << "$fill_up jobs spread over several taskers";
  EXPECT_GT(one_per_tasker_spread, 10u) << "allocation_rule 1 jobs on several taskers";
  EXPECT_GT(expression_steps_narrowing, 50u) << "8.1.9 wildcard expressions that some taskers pass, some not";
  EXPECT_GT(forced_steps, 50u) << "FORCED attributes keeping categories off taskers";
}
INSTANTIATE_TEST_SUITE_P(Shards, Differential, ::testing::Range(0, 8));

// Slurm's main pass (ConsecutiveBestFit, blocking queues) against the naive matcher's from-scratch
// version: 4 shards x 150 random farms, each with a random fit consumable and, on most, 1-4 random
// queues over random tasker subsets (overlapping, as Slurm's partitions do), a fifth of the jobs in no
// queue, on half of them a busy consumable; on half, random fit units (Slurm's --mem-per-cpu).
class SlurmPassDifferential : public ::testing::TestWithParam<int> {};

TEST_P(SlurmPassDifferential, FastPathEqualsNaiveOnRandomFarms) {
  size_t behind = 0, held = 0, eligible_held = 0, multi_held = 0, own_failed = 0, several_placed = 0,
         several_pending = 0, assigned_best_fit = 0, moved = 0, nodes_best_fit = 0, fit_unit_best_fit = 0,
         ranges_short = 0, tasks_uneven = 0;
  for (int i = 0; i < 150; ++i) {
    const uint64_t seed = 7000003ULL * static_cast<uint64_t>(GetParam() + 1) + static_cast<uint64_t>(i);
    synth::SynthSpec spec = random_spec(seed);
    spec.fill_up = 0.3;  // parallel jobs, most of them a slot a tasker (Slurm's -N)
    spec.one_per_tasker = 0.7;
    auto ds = synth::generate(spec);
    std::mt19937_64 rng(seed);
    DispatchOptions options;
    options.allocation = rng() % 4 == 0 ? AllocationPolicy::GreatestPower : AllocationPolicy::ConsecutiveBestFit;
    options.fit_consumable = rng() % ds.catalog.consumables().size();
    if (rng() % 5 != 0) {
      auto q = std::make_shared<BlockingQueues>();
      const size_t n = 1 + rng() % 4, nt = ds.taskers.size();
      for (size_t k = 0; k < n; ++k) {
        const double density = 0.3 + 0.7 * static_cast<double>(rng() % 100) / 100.0;
        std::vector<uint64_t> words((nt + 63) / 64, 0);
        uint64_t count = 0;
        for (size_t t = 0; t < nt; ++t)
          if (static_cast<double>(rng() % 1000) < density * 1000) {
            words[t >> 6] |= uint64_t{1} << (t & 63);
            ++count;
          }
        q->names.push_back("q" + std::to_string(k));
        q->taskers.push_back(kernels::TaskerSet::from_words(std::move(words), nt, count));
      }
      for (uint32_t j = 0; j < ds.jobs.size(); ++j)
        q->queue_of_job.push_back(rng() % 5 == 0 ? kNone : static_cast<uint32_t>(rng() % n));
      // a tenth of the jobs are of two or three queues (Slurm: several partitions), tried in turn
      q->several_first.push_back(0);
      for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
        if (rng() % 10 == 0) {
          q->queue_of_job[j] = kNone;
          const uint32_t k = 2 + static_cast<uint32_t>(rng() % 2);
          for (uint32_t x = 0; x < k; ++x) q->several.push_back(static_cast<uint32_t>(rng() % n));
        }
        q->several_first.push_back(static_cast<uint32_t>(q->several.size()));
      }
      // an eighth of the jobs name their taskers (Slurm's -w): held, not blocking, when they cannot run
      q->holds_own.resize(ds.jobs.size(), 0);
      for (uint32_t j = 0; j < ds.jobs.size(); ++j) q->holds_own[j] = rng() % 8 == 0 ? 1 : 0;
      // on half, taskers with nothing free of a random consumable are busy (Slurm: an --exclusive job's)
      if (rng() % 2 == 0) q->busy_consumable = static_cast<uint32_t>(rng() % ds.catalog.consumables().size());
      // on a fifth each, SchedulerParameters' sched_max_job_start and partition_job_depth
      if (rng() % 5 == 0) options.max_starts = 1 + rng() % (ds.jobs.size() / 2 + 1);
      if (rng() % 5 == 0) options.queue_depth = 1 + rng() % (ds.jobs.size() / 4 + 1);
      options.queues = std::move(q);
    }
    if (rng() % 2 == 0) {  // Slurm's whole tasks on a third of the jobs: a fit unit, most against a random
      // limit (--mem-per-cpu), some capped at a few tasks (a GRES job's max_tasks_this_node)
      options.fit_limit = rng() % ds.catalog.consumables().size();
      ds.jobs.fit_unit.resize(ds.jobs.size());
      for (uint32_t j = 0; j < ds.jobs.size(); ++j)
        if (rng() % 3 == 0) {
          const double fit = 1.0 + static_cast<double>(rng() % 3);
          const double limit = rng() % 3 == 0 ? 0.0 : 0.5 + static_cast<double>(rng() % 8);
          const double tasks = rng() % 3 == 0 ? 1.0 + static_cast<double>(rng() % 3) : 0.0;
          ds.jobs.fit_unit[j] = {fit, limit, tasks};
        }
    }
    // under Slurm's node choice a third of the jobs of K > 1 taskers a node count range (-N MIN-MAX)
    if (options.allocation == AllocationPolicy::ConsecutiveBestFit)
      for (uint32_t j = 0; j < ds.jobs.size(); ++j)
        if (ds.jobs.rule[j] == AllocationRule::OnePerTasker && ds.jobs.slots[j] > 1 && rng() % 3 == 0) {
          ds.jobs.pe_shape.resize(ds.jobs.size());
          ds.jobs.pe_shape[j].min_slots = 1 + static_cast<uint32_t>(rng() % (ds.jobs.slots[j] - 1));
        }
    // half the other jobs of K > 1 taskers run N > K tasks over them (Slurm's -n N -N K)
    for (uint32_t j = 0; j < ds.jobs.size(); ++j)
      if (ds.jobs.rule[j] == AllocationRule::OnePerTasker && ds.jobs.slots[j] > 1 &&
          ds.jobs.pe_shape_of(j).min_slots == 0 && rng() % 2 == 0) {
        ds.jobs.fit_unit.resize(ds.jobs.size());
        JobTable::FitUnit& u = ds.jobs.fit_unit[j];
        if (!(u.fit > 0)) u = {1.0 + static_cast<double>(rng() % 2), 0, 0, 0};
        u.total = ds.jobs.slots[j] + 1 + static_cast<double>(rng() % (3 * ds.jobs.slots[j]));
      }
    const naive::Result ref = naive::run(ds.catalog, ds.taskers, ds.jobs, options);
    const auto m = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active(), {}, nullptr, options);
    compare(ds, m, ref, "seed " + std::to_string(seed));
    for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
      if (ds.jobs.fit_unit_of(j).total > 0 && m.dispatch.status[j] == JobStatus::Assigned) {
        std::set<uint32_t> counts;
        for (uint32_t a = 0; a < m.dispatch.alloc_count[j]; ++a)
          counts.insert(m.dispatch.allocations[m.dispatch.alloc_first[j] + a].slots);
        tasks_uneven += counts.size() > 1;
      }
      ranges_short += ds.jobs.pe_shape_of(j).min_slots > 0 && m.dispatch.status[j] == JobStatus::Assigned &&
                      m.dispatch.alloc_count[j] < ds.jobs.slots[j];
      const PendingReason r = m.dispatch.reason[j];
      behind += r == PendingReason::BehindHigherPriority;
      held += r == PendingReason::TaskersHeld;
      eligible_held += r == PendingReason::EligibleHeld;
      multi_held += ds.jobs.rule[j] == AllocationRule::OnePerTasker && ds.jobs.slots[j] > 1 &&
                    (r == PendingReason::TaskersHeld || r == PendingReason::EligibleHeld);
      own_failed += options.queues && options.queues->holds_own[j] != 0 &&
                    (r == PendingReason::NoFreeCapacity || r == PendingReason::EligibleHeld);
      if (options.queues && !options.queues->queues_of(j).empty()) {
        several_placed += m.dispatch.status[j] == JobStatus::Assigned;
        several_pending += m.dispatch.status[j] == JobStatus::Pending;
      }
    }
    if (options.allocation == AllocationPolicy::ConsecutiveBestFit)
      for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
        nodes_best_fit += ds.jobs.rule[j] == AllocationRule::OnePerTasker && m.dispatch.alloc_count[j] > 1;
        fit_unit_best_fit += ds.jobs.fit_unit_of(j).fit > 0 && options.fit_limit != SIZE_MAX &&
                             m.dispatch.status[j] == JobStatus::Assigned;
      }
    if (options.allocation == AllocationPolicy::ConsecutiveBestFit && !options.queues) {
      const auto greatest = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
      for (uint32_t j = 0; j < ds.jobs.size(); ++j) {
        assigned_best_fit += m.dispatch.status[j] == JobStatus::Assigned;
        moved += m.dispatch.tasker[j] != greatest.dispatch.tasker[j];
      }
    }
  }
  EXPECT_GT(behind, 1000u) << "jobs behind a blocked queue";
  EXPECT_GT(held, 10u) << "jobs whose queue's taskers are all held";
  EXPECT_GT(eligible_held, 100u) << "jobs whose eligible taskers are all held, their queue's not";
  EXPECT_GT(multi_held, 10u) << "OnePerTasker jobs of K slots with fewer than K taskers unheld";
  EXPECT_GT(own_failed, 20u) << "jobs holding their own taskers when they cannot run";
  EXPECT_GT(several_placed, 20u) << "jobs of several queues placed in one";
  EXPECT_GT(several_pending, 20u) << "jobs of several queues pending";
  EXPECT_GT(assigned_best_fit, 200u);
  EXPECT_GT(nodes_best_fit, 30u) << "OnePerTasker jobs (Slurm's -N) placed by ConsecutiveBestFit";
  EXPECT_GT(moved, 40u) << "jobs ConsecutiveBestFit puts elsewhere than the greatest power";
  EXPECT_GT(fit_unit_best_fit, 150u) << "jobs with a fit unit (Slurm's --mem-per-cpu) placed by ConsecutiveBestFit";
  EXPECT_GT(ranges_short, 5u) << "node count ranges placed on fewer taskers than their most";
  EXPECT_GT(tasks_uneven, 10u) << "N tasks over K taskers (Slurm's -n N -N K) placed unevenly";
}
INSTANTIATE_TEST_SUITE_P(Shards, SlurmPassDifferential, ::testing::Range(0, 4));

TEST(Differential, SameResultForOneAndTwoThreads) {
  synth::SynthSpec s;
  s.taskers = 3000;
  s.jobs = 5000;
  s.categories = 400;
  s.seed = 99;
  const auto ds = synth::generate(s);
  MatchOutcome one, two;
  {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism, 1);
    one = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  }
  {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism, 2);
    two = run_match(ds.catalog, ds.taskers, ds.jobs, kernels::active());
  }
  ASSERT_EQ(one.eligible.size(), two.eligible.size());
  for (size_t c = 0; c < one.eligible.size(); ++c)
    ASSERT_EQ(one.eligible[c].eligible.to_vector(), two.eligible[c].eligible.to_vector());
  EXPECT_EQ(one.dispatch.tasker, two.dispatch.tasker);
  EXPECT_EQ(one.dispatch.reason, two.dispatch.reason);
  EXPECT_GT(one.dispatch.assigned, 0u);
}

}  // namespace

// Grid Engine's host rules (AllocationRule::HostPeSlots, HostFillUp, HostRoundRobin, HostBlocks) and slot
// ranges against the naive definition (naive::place_by_host) on random farms whose hosts have four
// taskers each with host-level pools: the random jobs' rules and ranges drawn again.
class HostRulesDifferential : public ::testing::TestWithParam<int> {};

TEST_P(HostRulesDifferential, FastPathEqualsNaiveOnRandomFarms) {
  size_t over_hosts = 0, ranged_short = 0, blocks = 0, robin = 0, with_master = 0, master_apart = 0;
  size_t with_master_only = 0, master_only_one = 0;
  for (int i = 0; i < 150; ++i) {
    const uint64_t seed = 7000003ULL * static_cast<uint64_t>(GetParam()) + static_cast<uint64_t>(i);
    synth::SynthSpec spec = random_spec(seed);
    spec.levels = true;  // hosts of four taskers, with host pools
    spec.fill_up = 0.7;  // jobs of several slots
    spec.one_per_tasker = 0;
    spec.with_slots = true;
    auto ds = synth::generate(spec);
    std::mt19937_64 rng(seed);
    JobTable& jobs = ds.jobs;
    jobs.pe_shape.assign(jobs.size(), {});
    for (uint32_t j = 0; j < jobs.size(); ++j) {
      if (!testing_support::draw_host_rule(jobs, j, rng)) continue;  // some jobs keep their rule
      const uint32_t slots = jobs.slots[j];
      JobTable::PeShape& shape = jobs.pe_shape[j];
      if (jobs.rule[j] == AllocationRule::HostBlocks) {
        if (rng() % 2) shape.min_slots = shape.per_host * (1 + static_cast<uint32_t>(rng() % (slots / shape.per_host)));
      } else if (rng() % 2) {
        shape.min_slots = 1 + static_cast<uint32_t>(rng() % slots);
      }
      if (shape.min_slots == slots) shape.min_slots = 0;
      // qsub -masterq on a third of the others (no range): the master on the taskers of a narrower request
      if (shape.min_slots == 0 && rng() % 3 == 0) {
        const std::string own = jobs.request_text[jobs.request[j]];
        const std::string narrow = rng() % 2 ? "ssd==true" : "cores>=" + std::to_string(4 * (1 + rng() % 4));
        Request r = parse_request(own.empty() ? narrow : "(" + own + ") && " + narrow, ds.catalog);
        canonicalize(r, ds.catalog);
        jobs.request_text.push_back(canonical_text(r, ds.catalog));
        jobs.requests.push_back(std::move(r));
        shape.master = static_cast<uint32_t>(jobs.requests.size() - 1);
        ++with_master;
        // -masterq beside -q on most of them: the master's taskers -q does not name (one slot before the
        // master); on half of those -q names none of the master's taskers, so that masters on one slot of
        // such a tasker come often enough in every shard under either compiler's draws
        if (rng() % 4 != 0) {
          const std::string q = rng() % 2 ? "cores>=" + std::to_string(8 * (1 + rng() % 2)) : "!(" + narrow + ")";
          Request o = parse_request("(" + jobs.request_text[shape.master] + ") && !(" + q + ")", ds.catalog);
          canonicalize(o, ds.catalog);
          jobs.request_text.push_back(canonical_text(o, ds.catalog));
          jobs.requests.push_back(std::move(o));
          shape.master_only = static_cast<uint32_t>(jobs.requests.size() - 1);
          ++with_master_only;
        }
      }
    }
    const naive::Result ref = naive::run(ds.catalog, ds.taskers, jobs);
    const auto m = run_match(ds.catalog, ds.taskers, jobs, kernels::active());
    compare(ds, m, ref, "seed " + std::to_string(seed));
    for (uint32_t j = 0; j < jobs.size(); ++j) {
      if (m.dispatch.status[j] != JobStatus::Assigned || !by_host(jobs.rule[j])) continue;
      uint32_t got = 0;
      std::set<uint32_t> hosts;
      for (uint32_t a = 0; a < m.dispatch.alloc_count[j]; ++a) {
        const Allocation& x = m.dispatch.allocations[m.dispatch.alloc_first[j] + a];
        got += x.slots;
        hosts.insert(ds.taskers.host_of[x.tasker]);
      }
      over_hosts += hosts.size() > 1 || (jobs.rule[j] == AllocationRule::HostPeSlots && m.dispatch.alloc_count[j] > 1);
      ranged_short += got < jobs.slots[j];
      blocks += jobs.rule[j] == AllocationRule::HostBlocks && hosts.size() > 1;
      master_apart += jobs.pe_shape_of(j).master != kNone && m.dispatch.alloc_count[j] > 1;
      // a master-only request's master on one slot of such a tasker, the job over several
      if (const uint32_t o = jobs.pe_shape_of(j).master_only; o != kNone && m.dispatch.alloc_count[j] > 1) {
        const Allocation& first = m.dispatch.allocations[m.dispatch.alloc_first[j]];
        master_only_one += first.slots == 1 && naive::satisfies(ds.taskers, first.tasker, jobs.requests[o]);
      }
      robin += jobs.rule[j] == AllocationRule::HostRoundRobin && hosts.size() > 1;
    }
  }
  EXPECT_GT(over_hosts, 30u) << "jobs over several hosts, or $pe_slots over several taskers of one";
  EXPECT_GT(ranged_short, 10u) << "ranges that took fewer than their most";
  EXPECT_GT(blocks, 5u) << "allocation_rule N over several hosts";
  EXPECT_GT(robin, 5u) << "$round_robin over several hosts";
  EXPECT_GT(with_master, 100u);
  EXPECT_GT(master_apart, 20u) << "-masterq jobs over several taskers";
  EXPECT_GT(with_master_only, 50u);
  EXPECT_GT(master_only_one, 5u) << "masters on one slot of a -masterq queue -q does not name";
}
INSTANTIATE_TEST_SUITE_P(Shards, HostRulesDifferential, ::testing::Range(0, 4));
