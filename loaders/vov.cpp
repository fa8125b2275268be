#include "loaders/vov.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>
#include <tbb/task_group.h>

#include "engine/model/vov.hpp"
#include "loaders/errors.hpp"
#include "loaders/policy.hpp"
#include "loaders/vov_build.hpp"
#include "loaders/vov_jobs.hpp"
#include "loaders/vov_tcl.hpp"

namespace colmatch::loaders {
namespace {

using vov_jobs::JobPiece;
using vov_jobs::KindTable;
using vov_jobs::KindView;
using vov_jobs::PiecesInOrder;

constexpr double kUnbounded = 1e18;  // VOV's MAXINT: an uncountable resource a tasker offers

// The tokens of a tasker's list (an AND of tokens: a tasker offers, it does not choose).
void tasker_tokens(const vov::Expr& e, std::vector<vov::Token>& out, const std::string& path, size_t line) {
  if (e.op == vov::Expr::Op::Token) {
    out.push_back(e.token);
    return;
  }
  if (e.op != vov::Expr::Op::And) throw LoadError(path, line, "-resources", "a tasker's list offers: no | or !");
  for (const vov::Expr& k : e.kids) tasker_tokens(k, out, path, line);
}

void replace_symbols(std::string_view text, const std::string& host, uint32_t cpus, const VovOptions& options,
                     int depth, size_t& replacements, std::string& out) {
  size_t i = 0;
  while (i < text.size()) {
    const size_t at = text.find('@', i);
    if (at == std::string_view::npos) {
      out.append(text.substr(i));
      break;
    }
    out.append(text.substr(i, at - i));
    const size_t end = text.find('@', at + 1);
    if (end == std::string_view::npos) throw std::invalid_argument(fmt::format("an '@' without its closing '@'"));
    const std::string name(text.substr(at + 1, end - at - 1));
    i = end + 1;
    if (depth >= 8) throw std::invalid_argument(fmt::format("@{}@ nests deeper than 8 symbols", name));
    if (++replacements > 65536)  // symbols that expand to many empty ones would otherwise take forever
      throw std::invalid_argument("more than 65,536 symbols replaced in one list");
    if (const auto d = options.symbols.find(name); d != options.symbols.end()) {
      replace_symbols(d->second, host, cpus, options, depth + 1, replacements, out);
    } else if (name == "HOST") {
      out += host;
    } else if (name == "CPUS") {
      out += fmt::format("CPUS/{}", cpus);
    } else if (name == "STD") {
      std::string std_list = "@HOST@ @CPUS@";
      if (options.symbols.count("OS")) std_list += " @OS@";
      if (options.symbols.count("MACHINE")) std_list += " @MACHINE@";
      replace_symbols(std_list, host, cpus, options, depth + 1, replacements, out);
    } else {
      throw std::invalid_argument(fmt::format(
          "no definition of the tasker symbol @{}@ (define it in the policy's [policy.vov.symbols])", name));
    }
    if (out.size() > 65536) throw std::invalid_argument("the list grows past 65,536 bytes with its symbols");
  }
}

}  // namespace

std::string replace_tasker_symbols(const std::string& resources, const std::string& host, uint32_t cpus,
                                   const VovOptions& options) {
  std::string out;
  size_t replacements = 0;
  replace_symbols(resources, host, cpus, options, 0, replacements, out);
  return out;
}

namespace {

// The farm's side of the dataset, from the taskers' and the maps' definitions alone (no job is needed:
// read beside the jobs): the resource maps, each tasker's offers, which names some tasker offers with a
// quantity, the finite TIMELEFT values. Then, once the jobs' expansions say which counted maps they
// hold (build_columns), the catalog (a numeric column per name some tasker offers with a quantity, a
// counted pool per counted map some job holds, one set-valued column for the other names) and the
// taskers' columns: a farm of 100,000 counted maps whose jobs hold 2,000 has 2,000 pools, not a charge
// of 100,000 consumables per category.
struct VovFarm {
  std::map<std::string, vov::ResourceMap, std::less<>> maps;
  VovTclFile defs;
  std::string taskers_path;
  std::vector<std::vector<vov::Token>> offers;   // per tasker
  std::set<std::string> consumable, quantified;  // names offered as name/N; with any quantity
  std::vector<double> timeleft;                  // the finite TIMELEFT values taskers offer, ascending, once
  Dataset ds;                                    // catalog and taskers (build_columns)
  uint32_t a_names = 0;
};

VovFarm build_farm(VovTclFile farm, const VovSources& src, const VovOptions& options) {
  const std::string& taskers_tcl = src.taskers;
  VovFarm out;
  out.taskers_path = taskers_tcl;
  auto& maps = out.maps;
  for (const VovMapDef& m : farm.maps) {
    vov::ResourceMap rm;
    rm.count = m.count;
    if (m.map) {
      try {
        rm.map = vov::parse_resources(*m.map);
      } catch (const vov::ResourceError& e) {
        throw LoadError(src.maps, m.line, src.map_field(), e.what());
      }
    }
    maps[m.name] = std::move(rm);
  }
  // Taskers' offers.
  std::vector<std::vector<vov::Token>>& offers = out.offers;
  offers.resize(farm.taskers.size());
  // Names some tasker offers with a quantity (name#N, name/N) are numeric columns; the others (offered
  // only as attributes, or by no tasker) are elements of one set-valued column, `resources`.
  std::set<std::string>&consumable = out.consumable, &quantified = out.quantified;
  consumable = {"CPUS", "PERCENT"};
  quantified = {"CPUS", "PERCENT", "TIMELEFT"};
  std::unordered_set<std::string_view> names;  // a tasker named twice is an error of the farm's files
  for (size_t t = 0; t < farm.taskers.size(); ++t) {
    const VovTaskerDef& d = farm.taskers[t];
    if (!names.insert(d.name).second)
      throw LoadError(taskers_tcl, d.line, src.tasker_field(), fmt::format("tasker '{}' is defined twice", d.name));
    try {
      const std::string list = replace_tasker_symbols(d.resources, d.host, d.cpus, options);
      tasker_tokens(vov::parse_resources(list, false), offers[t], taskers_tcl, d.line);
    } catch (const std::invalid_argument& e) {  // ResourceError too
      throw LoadError(taskers_tcl, d.line, src.resources_field(), e.what());
    }
    for (const vov::Token& k : offers[t]) {
      if (k.kind != vov::Token::Kind::Has) quantified.insert(k.name);
      if (k.kind == vov::Token::Kind::Consumes) consumable.insert(k.name);
      if (k.name == "TIMELEFT" && k.kind != vov::Token::Kind::Has && k.amount < kUnbounded)
        out.timeleft.push_back(k.amount);
    }
  }
  std::sort(out.timeleft.begin(), out.timeleft.end());
  out.timeleft.erase(std::unique(out.timeleft.begin(), out.timeleft.end()), out.timeleft.end());
  out.defs = std::move(farm);
  return out;
}

// The catalog and the taskers' columns of `f` (see VovFarm), with a pool for each counted map in `held`.
void build_columns(VovFarm& f, const std::set<std::string, std::less<>>& held) {
  const VovTclFile& farm = f.defs;
  const auto& maps = f.maps;
  const auto& offers = f.offers;
  const auto& consumable = f.consumable;
  Dataset& ds = f.ds;
  VovFarm& out = f;
  for (const std::string& n : f.quantified) {
    AttributeDef d;
    d.name = n;
    d.type = AttrType::Double;
    d.relop = consumable.count(n) ? Relop::LE : Relop::GE;
    d.consumable = consumable.count(n) > 0;
    d.scope = ConsumeScope::PerJob;
    if (n == "CPUS") d.default_amount = 1;  // a job takes one CPU unless it asks for more
    ds.catalog.add(std::move(d));
  }
  for (const auto& [name, m] : maps) {
    if (!m.count || !held.count(name)) continue;
    AttributeDef d = consumable_attribute("map:" + name, AttrType::Int, ConsumeScope::PerJob);
    d.label = name;
    ds.catalog.add(std::move(d));
  }
  std::string set_name = "resources";  // unless a resource has that name
  while (ds.catalog.find(set_name)) set_name += '_';
  AttributeDef set_def;
  set_def.name = set_name;
  set_def.type = AttrType::String;
  set_def.multi_valued = true;
  const uint32_t a_names = out.a_names = ds.catalog.add(std::move(set_def));
  TaskerBuilder tb(ds.catalog);
  for (const auto& [name, m] : maps)
    if (m.count && held.count(name)) tb.set_global(*ds.catalog.find("map:" + name), fmt::format("{}", *m.count));
  const uint32_t a_cpus = *ds.catalog.find("CPUS"), a_percent = *ds.catalog.find("PERCENT"),
                 a_timeleft = *ds.catalog.find("TIMELEFT");
  for (size_t t = 0; t < farm.taskers.size(); ++t) {
    const VovTaskerDef& d = farm.taskers[t];
    tb.add(d.name, d.power);  // (names checked once each by build_farm)
    tb.set_number(a_cpus, d.cpus);
    tb.set_number(a_percent, 100);
    tb.set_number(a_timeleft, kUnbounded);
    std::vector<std::string> attributes;
    for (const vov::Token& k : offers[t]) {
      const auto a = ds.catalog.find(k.name);
      if (!a || *a == a_names) {
        attributes.push_back(k.name);
        continue;
      }
      if (*a == a_cpus || *a == a_percent) continue;  // -CPUS and the 100 percent every tasker has
      tb.set_number(*a, k.kind == vov::Token::Kind::Has ? kUnbounded : k.amount);
    }
    if (!attributes.empty()) tb.set_list(a_names, attributes);
  }
  ds.taskers = std::move(tb).build();
}

// A job's duration matters only through TIMELEFT#<duration rounded up> (seed 000), which keeps the
// taskers offering at least that much: two durations with no tasker's TIMELEFT between them (`timeleft`:
// the finite values offered, ascending; every other tasker offers VOV's MAXINT) keep the same taskers.
// So a kind is split only by that class of its jobs' durations: each (kind, class) met becomes a kind of
// its own (in the kinds' order, then the class's), with the smallest duration of its jobs, rounded up,
// as the one its expansion shows; the jobs are renumbered to them. A farm whose taskers offer no finite
// TIMELEFT has one class (two when a duration passes MAXINT): its kinds stay as they are. O(jobs) then,
// O(jobs log jobs) otherwise.
void by_timeleft(std::vector<KindView>& kinds, const PiecesInOrder& order, const std::vector<double>& timeleft) {
  const auto F = static_cast<uint32_t>(timeleft.size());
  auto class_of = [&](double d) -> uint32_t {
    const double x = std::max(0.0, std::ceil(d));
    if (x > kUnbounded) return F + 1;  // no tasker keeps it
    return static_cast<uint32_t>(std::lower_bound(timeleft.begin(), timeleft.end(), x) - timeleft.begin());
  };
  auto duration = [](const JobPiece& p, size_t i) { return p.duration.empty() ? 0.0 : p.duration[i]; };
  // The smallest duration (rounded up) per new kind: non-negative doubles order as their bits.
  auto lower = [](std::atomic<uint64_t>& slot, double d) {
    const double x = std::max(0.0, std::ceil(d));
    uint64_t bits = 0;
    std::memcpy(&bits, &x, sizeof bits);
    uint64_t seen = slot.load(std::memory_order_relaxed);
    while (bits < seen && !slot.compare_exchange_weak(seen, bits, std::memory_order_relaxed)) {}
  };
  std::atomic<bool> one_class{true};
  if (F == 0)
    tbb::parallel_for(size_t{0}, order.pieces.size(), [&](size_t q) {
      const JobPiece& p = *order.pieces[q];
      for (size_t i = 0; i < p.duration.size(); ++i)
        if (class_of(p.duration[i]) != 0) one_class.store(false, std::memory_order_relaxed);
    });
  if (F == 0 && one_class.load()) {  // every kind keeps its number; its duration is its smallest
    std::vector<std::atomic<uint64_t>> least(kinds.size());
    tbb::parallel_for(size_t{0}, least.size(), [&](size_t k) { least[k].store(UINT64_MAX); });
    tbb::parallel_for(size_t{0}, order.pieces.size(), [&](size_t q) {
      const JobPiece& p = *order.pieces[q];
      for (size_t i = 0; i < p.size(); ++i) lower(least[p.kind[i]], duration(p, i));
    });
    for (size_t k = 0; k < kinds.size(); ++k) {
      const uint64_t bits = least[k].load();
      std::memcpy(&kinds[k].expected_duration, &bits, sizeof bits);
    }
    return;
  }
  // (kind, class) per job, the distinct ones sorted (kinds' order, then class), the jobs renumbered.
  std::vector<uint64_t> pairs(order.start.back());
  tbb::parallel_for(size_t{0}, order.pieces.size(), [&](size_t q) {
    const JobPiece& p = *order.pieces[q];
    for (size_t i = 0; i < p.size(); ++i)
      pairs[order.start[q] + i] = (uint64_t{p.kind[i]} << 32) | class_of(duration(p, i));
  });
  std::vector<uint64_t> distinct = pairs;
  tbb::parallel_sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  std::vector<std::atomic<uint64_t>> least(distinct.size());
  tbb::parallel_for(size_t{0}, least.size(), [&](size_t k) { least[k].store(UINT64_MAX); });
  tbb::parallel_for(size_t{0}, order.pieces.size(), [&](size_t q) {
    JobPiece& p = *order.pieces[q];
    for (size_t i = 0; i < p.size(); ++i) {
      const uint64_t key = pairs[order.start[q] + i];
      const auto at = static_cast<uint32_t>(std::lower_bound(distinct.begin(), distinct.end(), key) - distinct.begin());
      lower(least[at], duration(p, i));
      p.kind[i] = at;
    }
  });
  std::vector<KindView> split(distinct.size());
  for (size_t x = 0; x < distinct.size(); ++x) {
    split[x] = kinds[distinct[x] >> 32];
    split[x].timeleft_class = static_cast<uint32_t>(distinct[x]);
    const uint64_t bits = least[x].load();
    std::memcpy(&split[x].expected_duration, &bits, sizeof bits);
  }
  kinds = std::move(split);
}

}  // namespace

// Long (about 310 lines): one data flow in commented phases (jobs read beside the farm, kinds numbered,
// expanded, pooled, compiled, copied) over shared tables and the tasks running beside them, whose
// lifetimes the phases order; split, each phase would take most of those as parameters.
// `read_farm` gives the taskers' and maps' definitions; it runs beside the reading of jobs.jsonl (the farm
// does not depend on the jobs), on another thread. Its errors come first, as a reader taking the farm's
// files before the jobs would give them.
Dataset build_vov(const std::function<VovTclFile()>& read_farm, const VovSources& src, const std::string& jobs_jsonl,
                  const ProgressFn& progress, const VovOptions& options) {
  std::optional<VovFarm> farm_side;
  std::exception_ptr farm_error;
  tbb::task_group beside;
  beside.run([&] {
    try {
      farm_side.emplace(build_farm(read_farm(), src, options));
    } catch (...) {
      farm_error = std::current_exception();
    }
  });
  // Jobs, read in parallel pieces, each into its own JobPiece, put in file order afterwards (the kinds
  // are shared: one table).
  std::mutex done_mutex;
  std::map<size_t, std::unique_ptr<JobPiece>> done;  // by piece index
  KindTable table;
  const vov::Wrappers wrappers(options.wrappers);
  std::exception_ptr jobs_error;
  try {
    for_each_line_piece(
        jobs_jsonl, progress,
        [&](const LinePiece& piece) {
          auto mine = std::make_unique<JobPiece>();
          vov_jobs::read_piece(jobs_jsonl, piece, wrappers, table, *mine);
          const std::lock_guard<std::mutex> lock(done_mutex);
          done.emplace(piece.index, std::move(mine));
        },
        size_t{32} << 20, size_t{4} << 20);
  } catch (...) {
    jobs_error = std::current_exception();
  }
  beside.wait();
  if (farm_error) std::rethrow_exception(farm_error);
  if (jobs_error) std::rethrow_exception(jobs_error);
  const auto& maps = farm_side->maps;  // (not a structured binding: clang 14 cannot capture one)
  // Kinds numbered densely as the file shows them (the numbering does not depend on the threads): each
  // kind's first job found in parallel (an atomic minimum per kind), the kinds sorted by it, the jobs'
  // kinds renumbered in parallel.
  const std::vector<KindView> by_number = table.by_number();
  jsonl::Ordered ordered = jsonl::order_pieces(done, by_number.size());
  PiecesInOrder& order = ordered.order;
  std::vector<KindView> kinds(ordered.met.size());  // views into the table, which outlives them
  for (size_t x = 0; x < ordered.met.size(); ++x) kinds[x] = by_number[ordered.met[x]];
  by_timeleft(kinds, order, farm_side->timeleft);
  // The repeated-id check runs beside the kinds' expansions (which throw nothing: a kind's error is its
  // reason); its errors are thrown before the jobs are built.
  std::optional<std::pair<size_t, size_t>> repeated;
  beside.run([&] { repeated = jsonl::first_repeated_id(order); });
  // Should anything throw before the tasks beside are waited for, they are waited for before the
  // locals they use go (declared after those, destroyed first).
  struct Join {
    tbb::task_group& tasks;
    ~Join() {
      try {
        tasks.wait();
      } catch (...) {  // the first exception is the one unwinding
      }
    }
  } const join{beside};
  // The expansion depends on a kind's list, its duration's class (by_timeleft: which taskers TIMELEFT
  // keeps; the first kind's duration is the one shown) and those of its appended resources (Priority:,
  // Tool:, User:, Group:) that a map names: one that no map names is dropped after it is counted,
  // whatever its name (vov::expand). Kinds alike in these are expanded once, in parallel
  // (the 1M-job farm's 36,134 kinds are some thousands of expansions), each kind pointing at its
  // expansion (`rep`); a kind's reason (`why`) is its expansion's until compiling adds one of its own.
  std::vector<uint32_t> rep(kinds.size());
  std::vector<uint32_t> reps;  // the first kind of each expansion
  {
    // The maps named by an appended resource, by its type, without the type: whether a kind's is mapped
    // is one lookup of its value (views into the maps' names).
    std::array<std::unordered_set<std::string_view>, 4> mapped;
    static constexpr std::string_view kTypes[] = {"Priority:", "Tool:", "User:", "Group:"};
    for (const auto& [name, m] : maps)
      for (size_t t = 0; t < 4; ++t)
        if (std::string_view(name).starts_with(kTypes[t]))
          mapped[t].insert(std::string_view(name).substr(kTypes[t].size()));
    std::vector<std::string> keys(kinds.size());  // built in parallel, told apart in the kinds' order
    tbb::parallel_for(size_t{0}, kinds.size(), [&](size_t x) {
      const KindView& k = kinds[x];
      std::string& key = keys[x];
      auto text = [&](char tag, std::string_view t) {
        const auto n = static_cast<uint32_t>(t.size());
        key.push_back(tag);
        key.append(reinterpret_cast<const char*>(&n), sizeof n).append(t);
      };
      auto appended = [&](size_t type, std::string_view value) {
        if (mapped[type].empty() || !mapped[type].count(value)) return text('U', "");  // counted only
        const auto n = static_cast<uint32_t>(kTypes[type].size() + value.size());      // mapped: its name matters
        key.push_back('M');
        key.append(reinterpret_cast<const char*>(&n), sizeof n).append(kTypes[type]).append(value);
      };
      text('L', k.resources);
      appended(0, k.priority.empty() ? std::string_view("normal") : k.priority);
      if (!k.tool.empty()) appended(1, k.tool);
      else text('N', "");  // no Tool: appended at all
      appended(2, k.owner);
      appended(3, k.group);
      key.append(reinterpret_cast<const char*>(&k.timeleft_class), sizeof k.timeleft_class);
    });
    std::unordered_map<std::string_view, uint32_t> seen;
    seen.reserve(kinds.size());
    for (size_t x = 0; x < kinds.size(); ++x) {
      const auto [it, fresh] = seen.try_emplace(keys[x], static_cast<uint32_t>(reps.size()));
      if (fresh) reps.push_back(static_cast<uint32_t>(x));
      rep[x] = it->second;
    }
  }
  std::vector<vov::Expansion> exp(reps.size());
  std::vector<std::string> rep_why(reps.size());
  // A walk that meets a cycle after counted maps: what its jobs do depends on those maps when each is
  // dispatched (seed 000's order of stops, vov::expand_gated); with none before it, it is rejected here.
  std::vector<std::unique_ptr<vov::GatedExpansion>> gated(reps.size());
  std::vector<size_t> size(reps.size(), 0);  // resources in a distinct list's expansion(s)
  auto expand_rep = [&](size_t r) {
    try {
      const KindView& k = kinds[reps[r]];  // only the kinds expanded get a JobResources
      const vov::JobResources job{std::string(k.resources), std::string(k.command),  std::string(k.owner),
                                  std::string(k.group),     std::string(k.priority), k.expected_duration};
      exp[r] = vov::expand(
          job, maps, [](std::string_view, double) { return true; }, options.dollars, wrappers, true);
      size[r] = vov::size(exp[r].expanded);
      if (exp[r].outcome == vov::Expansion::Outcome::Cycle) {
        auto g = std::make_unique<vov::GatedExpansion>(
            vov::expand_gated(job, maps, options.dollars, wrappers, JobBuilder::kMaxGate));
        for (const vov::Expansion& e : g->by_mask) size[r] += vov::size(e.expanded);
        if (!g->gate.empty()) gated[r] = std::move(g);
        else rep_why[r] = "a cycle in the resource maps: " + exp[r].detail;
      }
    } catch (const vov::ResourceError& e) {
      const std::string what = e.what();
      rep_why[r] = what.starts_with("no definition of the resource $")
                       ? what + " (define it in the policy's [policy.vov.dollars], --policy)"
                       : fmt::format("column {}: {}", e.position, what);
    }
  };
  // What the distinct lists expand to is held together until compiled: at most
  // options.max_expanded_resources resources in all. In parallel while the total stays under it (nearly every farm);
  // once it passes, the lists are expanded again one by one in their order, each kept only while the total has room,
  // the others rejected saying so (the same ones whatever the threads).
  std::atomic<size_t> total{0};
  std::atomic<bool> over{false};
  tbb::parallel_for(size_t{0}, reps.size(), [&](size_t r) {
    if (over.load(std::memory_order_relaxed)) return;
    expand_rep(r);
    if (total.fetch_add(size[r], std::memory_order_relaxed) + size[r] > options.max_expanded_resources) over = true;
  });
  if (over) {
    size_t kept = 0;
    for (size_t r = 0; r < reps.size(); ++r) {
      exp[r] = {};
      gated[r].reset();
      rep_why[r].clear();
      size[r] = 0;
    }
    for (size_t r = 0; r < reps.size(); ++r) {
      expand_rep(r);
      if (kept + size[r] <= options.max_expanded_resources) {
        kept += size[r];
        continue;
      }
      exp[r] = {};
      gated[r].reset();
      rep_why[r] = fmt::format(
          "its list expands to {} resources through the maps, more than the {} colmatch keeps for the farm's "
          "distinct lists together ({} kept)",
          size[r], options.max_expanded_resources, kept);
    }
  }
  std::vector<std::string> why(kinds.size());
  for (size_t x = 0; x < kinds.size(); ++x) why[x] = rep_why[rep[x]];
  // The counted maps some expansion holds get a pool each (every alternative's: the walk with every map
  // available holds them all; a gated walk's, each combination's).
  std::set<std::string, std::less<>> pooled;
  for (size_t r = 0; r < reps.size(); ++r) {
    if (!rep_why[r].empty()) continue;
    for (const vov::Held& h : exp[r].held) pooled.insert(h.map);
    if (gated[r]) {
      for (const vov::Held& h : gated[r]->gate) pooled.insert(h.map);
      for (const vov::Expansion& e : gated[r]->by_mask)
        for (const vov::Held& h : e.held) pooled.insert(h.map);
    }
  }
  build_columns(*farm_side, pooled);
  Dataset& ds = farm_side->ds;
  const uint32_t a_names = farm_side->a_names;
  ds.name = "vov";
  // One prototype job per kind: its compiled request and charges (a kind whose list cannot be
  // matched keeps its reason instead); every job is then a copy of its kind's but for id and times.
  // Expansions alike (the list as text, which parses back to the same list, and the counted maps held)
  // compile alike: one compiled request and one charge list per distinct expansion, interned in the
  // kinds' order.
  std::vector<std::string> expansion(reps.size());
  tbb::parallel_for(size_t{0}, reps.size(), [&](size_t r) {
    if (!rep_why[r].empty() || gated[r]) return;
    expansion[r] = vov::to_text(exp[r].expanded);
    for (const vov::Held& h : exp[r].held) {
      const auto n = static_cast<uint32_t>(h.map.size());
      expansion[r].push_back('\0');
      expansion[r].append(reinterpret_cast<const char*>(&n), sizeof n).append(h.map);
      expansion[r].append(reinterpret_cast<const char*>(&h.units), sizeof h.units);
    }
  });
  std::vector<uint32_t> distinct_of(reps.size(), kNone), distinct;  // an expansion's text; each one's first
  {
    std::unordered_map<std::string, uint32_t> seen;
    for (size_t r = 0; r < reps.size(); ++r) {  // reps in the kinds' order: interned as the kinds show them
      if (!rep_why[r].empty() || gated[r]) continue;
      const auto [it, fresh] = seen.try_emplace(std::move(expansion[r]), static_cast<uint32_t>(distinct.size()));
      if (fresh) distinct.push_back(static_cast<uint32_t>(r));
      distinct_of[r] = it->second;
    }
  }
  // An expansion whose ORs hold counted maps has several scheduling solutions (seed 000), one taken at
  // dispatch (JobTable::Choice): its jobs ask for what the solutions ask together and charge what they
  // all charge; each solution is compiled with what it alone charges. Any other has one solution.
  using Charges = std::vector<std::pair<uint32_t, double>>;
  std::vector<Request> compiled(distinct.size());
  std::vector<Charges> charges(distinct.size());
  std::vector<std::vector<Request>> solution_requests(distinct.size());
  std::vector<std::vector<Charges>> solution_charges(distinct.size());
  std::vector<uint8_t> solutions_cut(distinct.size(), 0);
  tbb::parallel_for(size_t{0}, distinct.size(), [&](size_t d) {
    const size_t r = distinct[d];
    auto held_charges = [&](const std::vector<vov::Held>& held, Charges& into) {
      for (const vov::Held& h : held) into.emplace_back(*ds.catalog.find("map:" + h.map), h.units);
    };
    if (!vov::chooses(exp[r].expanded)) {  // one solution, the list itself (most kinds: no copy)
      compiled[d] = compile_expansion(exp[r].expanded, ds.catalog, a_names, true, charges[d]);
      held_charges(exp[r].held, charges[d]);
      return;
    }
    bool cut = false;
    std::vector<vov::Solution> sols = vov::solutions(exp[r].expanded, vov::kMaxSolutions, cut);
    solutions_cut[d] = cut;
    compiled[d] = compile_expansion(vov::without_held(exp[r].expanded), ds.catalog, a_names, true, charges[d]);
    std::vector<vov::Held> common;  // the counted maps held outside every OR: held by every solution
    for (const vov::Expr& k : exp[r].expanded.kids)
      if (k.op == vov::Expr::Op::Token && k.token.kind == vov::Token::Kind::Held)
        common.push_back({k.token.name, k.token.amount});
    held_charges(common, charges[d]);
    for (vov::Solution& s : sols) {
      solution_charges[d].emplace_back();
      solution_requests[d].push_back(compile_expansion(s.list, ds.catalog, a_names, true, solution_charges[d].back()));
      held_charges(s.held, solution_charges[d].back());
    }
  });
  JobBuilder protos(ds.catalog);
  const std::vector<uint32_t> interned = protos.intern_all(std::move(compiled));
  std::vector<uint32_t> choice_of(distinct.size(), kNone);
  for (size_t d = 0; d < distinct.size(); ++d) {
    if (solution_requests[d].empty()) continue;
    const std::vector<uint32_t> sr = protos.intern_all(std::move(solution_requests[d]));
    choice_of[d] = protos.add_choice(sr, solution_charges[d]);
  }
  std::vector<uint32_t> gated_choice(reps.size(), kNone);
  std::vector<uint8_t> gated_cut(reps.size(), 0);
  for (size_t r = 0; r < reps.size(); ++r)
    if (gated[r]) gated_choice[r] = gated_choice_of(*gated[r], ds.catalog, a_names, protos, gated_cut[r]);
  for (size_t x = 0; x < kinds.size(); ++x) {
    if (x + 8 < kinds.size()) {  // kinds lie scattered over the table's shards: fetch ahead what is read
      __builtin_prefetch(kinds[x + 8].owner.data());
      __builtin_prefetch(&exp[rep[x + 8]]);
    }
    const uint32_t p = protos.add("", kinds[x].owner, kinds[x].group, 0, 0);
    if (!why[x].empty()) continue;
    const uint32_t r = rep[x];
    if (gated[r]) {  // what it does is decided when it is dispatched: an empty request, the gate's choice
      if (exp[r].curtailed) protos.set_note(p, "depth limit");  // (its walk with every map available)
      if (gated_cut[r]) protos.set_note(p, "solutions limit");
      protos.set_choice(gated_choice[r]);
      continue;
    }
    if (exp[r].curtailed) protos.set_note(p, "depth limit");  // VOV curtails silently; colmatch says so
    if (solutions_cut[distinct_of[r]]) protos.set_note(p, "solutions limit");
    try {
      protos.set_request_index(interned[distinct_of[r]]);
      for (const auto& [a, n] : charges[distinct_of[r]]) protos.set_amount(a, n);
      if (choice_of[distinct_of[r]] != kNone) protos.set_choice(choice_of[distinct_of[r]]);
    } catch (const ValueError& e) {
      why[x] = e.what();
    }
  }
  const JobTable prototypes = std::move(protos).build();
  beside.wait();
  // Errors as a reader going line by line would meet them: a repeated id before the first bad line wins.
  jsonl::throw_first_error(jobs_jsonl, ordered, repeated);
  std::vector<std::pair<uint32_t, std::string>> rejected;  // (job, reason): jobs of a kind with a reason
  std::vector<JobBuilder::CopiedJobs> copied;
  std::vector<uint8_t> has_why(kinds.size());  // (a byte a kind: looked up once per job)
  for (size_t x = 0; x < kinds.size(); ++x) has_why[x] = !why[x].empty();
  const bool any_why = std::find(has_why.begin(), has_why.end(), 1) != has_why.end();
  for (size_t q = 0; q < order.pieces.size(); ++q) {
    const JobPiece& p = *order.pieces[q];
    for (size_t i = 0; any_why && i < p.size(); ++i)
      if (has_why[p.kind[i]])
        rejected.emplace_back(
            static_cast<uint32_t>(order.start[q] + i),
            fmt::format("{}:{}: job {}: field 'resources': {}", jobs_jsonl, p.line_of(i), p.id(i), why[p.kind[i]]));
    copied.push_back({p.kind, p.id_text, p.id_end, p.submit, p.runtime, p.walltime});
  }
  JobBuilder jb(ds.catalog);
  try {
    jb.add_copies(prototypes, copied);
  } catch (const ValueError& e) {  // a negative or infinite time: the reader took numbers >= 0 only
    throw LoadError(jobs_jsonl, 0, "", e.what());
  }
  for (auto& [j, reason] : rejected) jb.reject(j, std::move(reason));
  ds.jobs = std::move(jb).build();
  ds.policy = ds.policy_defaults = accelerator_policy_defaults();
  return std::move(ds);
}

Dataset load_vov(const std::string& taskers_tcl, const std::string& resources_tcl, const std::string& jobs_jsonl,
                 const ProgressFn& progress, const VovOptions& options) {
  const auto read_farm = [&] {
    VovTclFile farm = read_vov_tcl(taskers_tcl);
    if (!resources_tcl.empty()) {
      VovTclFile res = read_vov_tcl(resources_tcl);
      for (auto& t : res.taskers) farm.taskers.push_back(std::move(t));
      for (auto& m : res.maps) farm.maps.push_back(std::move(m));
    }
    return farm;
  };
  return build_vov(read_farm, {taskers_tcl, resources_tcl.empty() ? taskers_tcl : resources_tcl}, jobs_jsonl, progress,
                   options);
}

}  // namespace colmatch::loaders
