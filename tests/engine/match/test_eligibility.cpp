// Eligibility (engine/match/eligibility.hpp): the kernel (mask) path against the row path, capacity as a
// `>= need` clause under the strict hierarchy, soft tiers, and one-bit refreshes of a cached category.
#include <map>
#include <string>

#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include "datasets/synth/synthetic.hpp"
#include "engine/match/eligibility.hpp"
#include "tests/reference/naive_matcher.hpp"

using namespace colmatch;

namespace {

struct Farm {
  Catalog cat;
  uint32_t arch, cores, site, mem, lic;
  TaskerTable taskers;
  Farm() {
    AttributeDef d;
    d.name = "arch";
    arch = cat.add(d);
    d.name = "site";
    d.type = AttrType::ReString;
    site = cat.add(d);
    d = AttributeDef{};
    d.name = "cores";
    d.type = AttrType::Int;
    d.relop = Relop::LE;
    cores = cat.add(d);
    d.name = "mem";
    d.type = AttrType::Memory;
    d.consumable = true;
    mem = cat.add(d);
    d.name = "lic";
    d.type = AttrType::Int;
    d.scope = ConsumeScope::PerJob;
    lic = cat.add(d);
    TaskerBuilder tb(cat);
    const uint32_t h0 = tb.add_host("h0"), h1 = tb.add_host("h1");
    tb.set_host(h0, cores, "16");
    tb.set_host(h1, mem, "8G");
    tb.set_global(lic, "3");
    // 130 taskers: crosses two word boundaries; every 7th has no arch, every 5th no mem of its own.
    for (int i = 0; i < 130; ++i) {
      tb.add("t" + std::to_string(i), 1.0 + (i % 4), i % 3 == 0 ? h0 : (i % 3 == 1 ? h1 : kNone));
      if (i % 7) tb.set(arch, i % 2 ? "lx-amd64" : "lx-arm64");
      tb.set(site, i % 3 ? "cern.ch" : "in2p3.fr");
      if (i % 3 != 0) tb.set(cores, std::to_string(1 + i % 32));
      if (i % 5) tb.set(mem, std::to_string(1 + i % 6) + "G");
    }
    taskers = std::move(tb).build();
  }
  Request parse(const char* text) const { return parse_request(text, cat); }
  std::vector<double> need(double mem_bytes, double lic_units) const {
    std::vector<double> n(cat.consumables().size(), 0.0);
    n[static_cast<size_t>(cat.consumable_slot(mem))] = mem_bytes;
    n[static_cast<size_t>(cat.consumable_slot(lic))] = lic_units;
    return n;
  }
};

const double GB = 1024.0 * 1024 * 1024;

TEST(Eligibility, KernelPathEqualsRowPathOnEveryInstructionSet) {
  const Farm f;
  const char* requests[] = {"",
                            "arch==lx-amd64",
                            "arch!=lx-amd64",
                            "!(arch==lx-amd64)",
                            "cores>=8",
                            "cores<4 || arch=={lx-arm64, sol}",
                            "site==\"*.ch\" && !(cores>20)",
                            "site!={\"in2p3.*\"} && arch==nosuch"};
  const std::vector<std::vector<double>> needs = {f.need(0, 0), f.need(3 * GB, 0), f.need(0, 2), f.need(5 * GB, 4)};
  size_t partial = 0;
  for (kernels::Isa isa : kernels::usable_isas()) {
    const kernels::KernelTable& k = *kernels::table_for(isa);
    for (const char* text : requests)
      for (const auto& need : needs) {
        const Request r = f.parse(text);
        std::vector<uint64_t> words(kernels::words_for(f.taskers.size()));
        eligible_words(f.cat, f.taskers, r, need, k, words.data());
        size_t count = 0;
        for (uint32_t t = 0; t < f.taskers.size(); ++t) {
          const bool bit = (words[t >> 6] >> (t & 63)) & 1;
          ASSERT_EQ(bit, tasker_eligible(f.cat, f.taskers, r, need, t))
              << kernels::isa_name(isa) << " '" << text << "' tasker " << f.taskers.names[t];
          count += bit;
        }
        EXPECT_EQ(words.back() >> (f.taskers.size() % 64), 0u) << "tail bits clear";
        partial += count > 0 && count < f.taskers.size();
      }
  }
  EXPECT_GT(partial, 20u) << "the requests split the farm, so the comparison means something";
}

// A set-valued attribute (a list of names per tasker: CERIT-SC node properties, Accelerator resources)
// is decided from its dictionary's element index: the entries holding each requested name, not a scan
// of every distinct set. Many distinct sets (each tasker its own), names common and rare, lists, `!=`
// and a name nobody has; the kernel path equals the row path, which scans each set.
TEST(Eligibility, SetValuedClausesUseTheElementIndex) {
  Catalog cat;
  AttributeDef d;
  d.name = "props";
  d.multi_valued = true;
  const uint32_t props = cat.add(d);
  TaskerBuilder tb(cat);
  for (int i = 0; i < 300; ++i) {
    tb.add("t" + std::to_string(i));
    std::vector<std::string> v{"host" + std::to_string(i)};  // every set is distinct
    if (i % 2) v.push_back("common");
    if (i % 37 == 0) v.push_back("rare");
    if (i % 11 == 0) v.push_back("common");  // twice in one list
    if (i % 13) tb.set_list(props, v);       // some taskers have no set at all
  }
  const TaskerTable t = std::move(tb).build();
  ASSERT_TRUE(t.columns[props].dict.elements_indexed());
  EXPECT_EQ(t.columns[props].dict.entries_with("rare").size(), 8u) << "0, 37, ..., 259 (but 0 has no set)";
  const char* requests[] = {"props==common", "props==rare",      "props!=rare",   "props=={rare,host5}",
                            "props==host4",  "!(props==common)", "props==nosuch", "props!={common,rare}"};
  size_t partial = 0;
  for (const char* text : requests) {
    const Request r = parse_request(text, cat);
    std::vector<uint64_t> words(kernels::words_for(t.size()));
    eligible_words(cat, t, r, {}, kernels::active(), words.data());
    size_t count = 0;
    for (uint32_t k = 0; k < t.size(); ++k) {
      const bool bit = (words[k >> 6] >> (k & 63)) & 1;
      ASSERT_EQ(bit, tasker_eligible(cat, t, r, {}, k)) << text << " tasker " << t.names[k];
      count += bit;
    }
    partial += count > 0 && count < t.size();
  }
  EXPECT_EQ(partial, 7u) << "all but props==nosuch split the farm";
}

TEST(Eligibility, CapacityIsAGreaterOrEqualClauseOnEveryLevel) {
  const Farm f;
  const Request all = f.parse("");
  for (uint32_t t = 0; t < f.taskers.size(); ++t) {
    const Column& mem = f.taskers.columns[f.mem];
    const bool defined = mem.has(t) || mem.host().has(t);
    EXPECT_EQ(tasker_eligible(f.cat, f.taskers, all, f.need(1, 0), t), defined)
        << "a consumable no level defines cannot take a charge: " << f.taskers.names[t];
    EXPECT_TRUE(tasker_eligible(f.cat, f.taskers, all, f.need(0, 0), t)) << "no charge, no capacity needed";
    // h1 offers 8G: its taskers with a pool of their own (1-6G) cannot take 7G; those without can
    if (f.taskers.host_of[t] != kNone && f.taskers.host_names[f.taskers.host_of[t]] == "h1") {
      EXPECT_EQ(tasker_eligible(f.cat, f.taskers, all, f.need(7 * GB, 0), t), !mem.has(t)) << f.taskers.names[t];
    }
  }
  // the global licence pool of 3: every tasker can take 3, none 4
  const CategoryEligibility three = evaluate_category(f.cat, f.taskers, all, nullptr, f.need(0, 3), kernels::active());
  const CategoryEligibility four = evaluate_category(f.cat, f.taskers, all, nullptr, f.need(0, 4), kernels::active());
  EXPECT_EQ(three.eligible.count(), f.taskers.size());
  EXPECT_EQ(four.eligible.count(), 0u);
}

TEST(Eligibility, SoftTiersPartitionTheEligibleTaskers) {
  const Farm f;
  const Request hard = f.parse("cores>=2"), soft = f.parse("arch==lx-amd64 && site==\"*.ch\"");
  const auto e = evaluate_category(f.cat, f.taskers, hard, &soft, f.need(0, 0), kernels::active());
  ASSERT_EQ(e.tiers.size(), 3u) << "0, 1 or 2 violations";
  uint64_t sum = 0;
  for (size_t v = 0; v < e.tiers.size(); ++v) {
    sum += e.tiers[v].count();
    for (uint32_t t : e.tiers[v].to_vector()) {
      EXPECT_TRUE(e.eligible.contains(t));
      EXPECT_EQ(soft_violations(f.taskers, soft, t), v) << f.taskers.names[t];
    }
  }
  EXPECT_EQ(sum, e.eligible.count());
  const Request none = f.parse("arch==nosuch");
  EXPECT_TRUE(evaluate_category(f.cat, f.taskers, none, &soft, f.need(0, 0), kernels::active()).tiers.empty())
      << "no tiers are counted for a category nothing is eligible for";
}

TEST(Eligibility, RefreshTaskerEqualsAFreshEvaluation) {
  Farm f;
  const Request hard = f.parse("arch==lx-amd64"), soft = f.parse("cores>=10");
  const Request none = f.parse("arch==lx-sparc");
  auto e = evaluate_category(f.cat, f.taskers, hard, &soft, f.need(GB, 0), kernels::active());
  auto empty = evaluate_category(f.cat, f.taskers, none, &soft, f.need(0, 0), kernels::active());
  ASSERT_TRUE(empty.tiers.empty());
  Column& arch = f.taskers.columns[f.arch];
  const uint32_t sparc = arch.dict.intern("lx-sparc"), amd = arch.dict.intern("lx-amd64");
  for (uint32_t t : {0u, 5u, 64u, 129u}) {
    arch.set_queue(t, 0, t % 2 ? sparc : amd);
    refresh_tasker(f.cat, f.taskers, hard, &soft, f.need(GB, 0), t, e);
    refresh_tasker(f.cat, f.taskers, none, &soft, f.need(0, 0), t, empty);
  }
  const auto fresh = evaluate_category(f.cat, f.taskers, hard, &soft, f.need(GB, 0), kernels::active());
  EXPECT_EQ(e.eligible.to_vector(), fresh.eligible.to_vector());
  ASSERT_EQ(e.tiers.size(), fresh.tiers.size());
  for (size_t v = 0; v < e.tiers.size(); ++v) EXPECT_EQ(e.tiers[v].to_vector(), fresh.tiers[v].to_vector()) << v;
  const auto fresh_none = evaluate_category(f.cat, f.taskers, none, &soft, f.need(0, 0), kernels::active());
  EXPECT_EQ(empty.eligible.to_vector(), fresh_none.eligible.to_vector());
  ASSERT_EQ(empty.tiers.size(), fresh_none.tiers.size()) << "tiers appear once something is eligible";
  for (size_t v = 0; v < empty.tiers.size(); ++v)
    EXPECT_EQ(empty.tiers[v].to_vector(), fresh_none.tiers[v].to_vector()) << v;
}

}  // namespace

// compute_eligibility keeps, per thread, the masks of the clauses it computed and reuses them for the
// next categories that ask the same clause (the Accelerator farm's 6,757 categories ask about a thousand
// distinct ones): every category's eligible set, soft tiers and steps equal evaluate_category's, which
// computes each clause afresh, on random farms whose templates share clauses (few attribute values,
// levels, soft requests, Grid Engine 8.1.9 expressions), on one thread and on four.
TEST(Eligibility, ClausesComputedOnceEqualClausesComputedPerCategory) {
  size_t shared = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    synth::SynthSpec s;
    s.seed = seed;
    s.taskers = 50 + seed * 7;
    s.jobs = 400;
    s.categories = 120;
    s.levels = seed % 2 == 0;
    s.soft = seed % 3 == 0 ? 0.5 : 0.0;
    s.sge_819 = seed % 4 == 1;
    s.max_depth = static_cast<int>(seed % 3);
    const auto ds = synth::generate(s);
    const Categories cats = categorize(ds.catalog, ds.jobs);
    std::map<std::string, int> clauses;  // how many categories ask each clause text (top-level terms)
    for (size_t c = 0; c < cats.size(); ++c) {
      const Request& r = ds.jobs.requests[cats.request[c]];
      if (r.kind == Request::Kind::And)
        for (const Request& k : r.kids) ++clauses[canonical_text(k, ds.catalog)];
    }
    for (const auto& [text, n] : clauses) shared += n > 1;
    for (const int threads : {1, 4}) {
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
      const auto all = compute_eligibility(ds.catalog, ds.taskers, ds.jobs, cats, kernels::active());
      ASSERT_EQ(all.size(), cats.size());
      for (size_t c = 0; c < cats.size(); ++c) {
        const Request* soft = cats.soft[c] != 0 ? &ds.jobs.requests[cats.soft[c]] : nullptr;
        const CategoryEligibility one =
            evaluate_category(ds.catalog, ds.taskers, ds.jobs.requests[cats.request[c]], soft, cats.unit_charge[c],
                              kernels::active(), &cats.charge_kind[c]);
        const std::string ctx = "seed " + std::to_string(seed) + " category " + std::to_string(c);
        ASSERT_EQ(all[c].eligible.to_vector(), one.eligible.to_vector()) << ctx;
        ASSERT_EQ(all[c].tiers.size(), one.tiers.size()) << ctx;
        for (size_t v = 0; v < one.tiers.size(); ++v) ASSERT_EQ(all[c].tiers[v].to_vector(), one.tiers[v].to_vector());
        ASSERT_EQ(all[c].steps.size(), one.steps.size()) << ctx;
        for (size_t i = 0; i < one.steps.size(); ++i) {
          ASSERT_EQ(all[c].steps[i].pass, one.steps[i].pass) << ctx << " step " << i;
          ASSERT_EQ(all[c].steps[i].after, one.steps[i].after) << ctx << " step " << i;
        }
      }
    }
  }
  EXPECT_GT(shared, 100u) << "the farms' categories share clauses";
}

// Issue 11 (why is my job pending): each step of a category's eligibility chain carries the taskers
// passing it alone and those left after it, counted on the masks the evaluation builds; here they equal
// a row-by-row count with the naive matcher, on random farms with levels, over every category.
TEST(EligibilitySteps, CountsEqualARowByRowCount) {
  size_t categories = 0, emptied = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    synth::SynthSpec s;
    s.seed = seed;
    s.taskers = 40 + seed % 90;
    s.jobs = 120;
    s.categories = 30;
    s.levels = seed % 2 == 0;
    const auto ds = synth::generate(s);
    const Categories cats = categorize(ds.catalog, ds.jobs);
    const auto elig = compute_eligibility(ds.catalog, ds.taskers, ds.jobs, cats, kernels::active());
    for (size_t c = 0; c < cats.size(); ++c) {
      const Request& r = ds.jobs.requests[cats.request[c]];
      std::vector<Request> terms;  // the steps, as requests: the top-level AND terms, then capacity clauses
      if (r.kind == Request::Kind::And && !r.kids.empty()) terms = r.kids;
      else terms.push_back(r);
      const auto& cons = ds.catalog.consumables();
      for (size_t k = 0; k < cons.size(); ++k)
        if (cats.unit_charge[c][k] > 0) {
          Request cap;
          cap.kind = Request::Kind::Clause;
          cap.clause = Clause{cons[k], Relop::GE, {cats.unit_charge[c][k]}, {}};
          terms.push_back(cap);
        }
      const auto& steps = elig[c].steps;
      ASSERT_EQ(steps.size(), terms.size()) << "category " << c;
      std::vector<uint8_t> left(ds.taskers.size(), 1);
      for (size_t i = 0; i < terms.size(); ++i) {
        uint64_t pass = 0, after = 0;
        for (uint32_t t = 0; t < ds.taskers.size(); ++t) {
          const bool ok = naive::satisfies(ds.taskers, t, terms[i]);
          pass += ok;
          left[t] = left[t] && ok;
          after += left[t];
        }
        ASSERT_EQ(steps[i].pass, pass) << "seed " << seed << " category " << c << " step " << i;
        ASSERT_EQ(steps[i].after, after) << "seed " << seed << " category " << c << " step " << i;
      }
      ASSERT_EQ(steps.back().after, elig[c].eligible.count());
      ++categories;
      emptied += elig[c].eligible.count() == 0;
    }
  }
  EXPECT_GT(categories, 1000u);
  EXPECT_GT(emptied, 50u) << "some categories end with no tasker, so the first emptying step matters";
}
