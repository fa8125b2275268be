#include "engine/match/categories.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <unordered_map>

#include <tbb/parallel_for.h>

#include "engine/model/hash_slots.hpp"

namespace colmatch {

namespace {

// Whether `d` is the built-in `slots` consumable.
bool is_slots(const AttributeDef& d) noexcept { return d.name == "slots"; }

// The consumables every job is charged without requesting them, by increasing index: `slots` (one per
// slot) and those with a nonzero default amount.
std::vector<uint32_t> charged_by_default(const Catalog& catalog) {
  std::vector<uint32_t> out;
  const auto& cons = catalog.consumables();
  for (uint32_t k = 0; k < cons.size(); ++k) {
    const AttributeDef& d = catalog.at(cons[k]);
    if (is_slots(d) || d.default_amount.value_or(0.0) != 0) out.push_back(k);
  }
  return out;
}

// A job's requested amount of each consumable it requests or is charged by default (`defaults`,
// charged_by_default), NaN where it requested none: `fn(k, a)` by increasing k. One pass over the
// job's entries (in consumable order) and the defaults: what a job costs is what it asks and the
// defaults, not the farm's consumable count (an Accelerator farm's counted maps, seed 000).
template <typename Fn>
void each_amount(std::span<const uint32_t> defaults, std::span<const JobAmounts::Entry> entries, Fn&& fn) {
  constexpr uint32_t kEnd = std::numeric_limits<uint32_t>::max();
  size_t e = 0, d = 0;
  while (e < entries.size() || d < defaults.size()) {
    const uint32_t ke = e < entries.size() ? entries[e].consumable : kEnd;
    const uint32_t kd = d < defaults.size() ? defaults[d] : kEnd;
    if (ke <= kd) {
      fn(ke, entries[e++].amount);
      d += kd == ke;
    } else {
      fn(kd, std::numeric_limits<double>::quiet_NaN());
      ++d;
    }
  }
}

// The charge of a job of `slots` slots requesting `entries`: per-slot amounts x slots, per-job amounts
// once; a consumable it does not request charges its catalog default (or 0); one named "slots"
// charges the slot count.
ChargeVector need_of(const Catalog& catalog, std::span<const uint32_t> defaults,
                     std::span<const JobAmounts::Entry> entries, double slots) {
  const auto& cons = catalog.consumables();
  std::vector<ChargeVector::Entry> out;
  each_amount(defaults, entries, [&](uint32_t k, double a) {
    const AttributeDef& d = catalog.at(cons[k]);
    if (std::isnan(a)) {
      if (is_slots(d)) {
        out.push_back({k, slots});  // the built-in slots consumable is charged once per slot
        return;
      }
      a = d.default_amount.value_or(0.0);
    }
    out.push_back({k, (d.scope == ConsumeScope::PerSlot && !is_slots(d)) ? a * slots : a});
  });
  return ChargeVector(static_cast<uint32_t>(cons.size()), std::move(out));
}

// The charges of one $fill_up job: per slot instance (per-slot amounts, 1 of "slots") and once per job
// on its master tasker (per-job amounts, defaults applied).
void fill_up_need(const Catalog& catalog, std::span<const uint32_t> defaults, const JobTable& jobs, uint32_t j,
                  ChargeVector& per_instance, ChargeVector& per_job) {
  const auto& cons = catalog.consumables();
  std::vector<ChargeVector::Entry> instance, job;
  each_amount(defaults, jobs.amount.of(j), [&](uint32_t k, double a) {
    const AttributeDef& d = catalog.at(cons[k]);
    if (is_slots(d)) {
      if (std::isnan(a)) instance.push_back({k, 1});
      else job.push_back({k, a});
      return;
    }
    const double amount = std::isnan(a) ? d.default_amount.value_or(0.0) : a;
    if (d.scope == ConsumeScope::PerSlot) instance.push_back({k, amount});
    else job.push_back({k, amount});
  });
  per_instance = ChargeVector(static_cast<uint32_t>(cons.size()), std::move(instance));
  per_job = ChargeVector(static_cast<uint32_t>(cons.size()), std::move(job));
}

// The charge kinds of job j (one per consumable) under Son of Grid Engine 8.1.9's reading; `out` left
// empty under GridEngineReading::Design60 or when every kind is Everywhere (then it costs the job's
// entries and the defaults, not the consumable count).
void job_charge_kinds(const Catalog& catalog, std::span<const uint32_t> defaults, const JobTable& jobs, uint32_t j,
                      std::vector<ChargeKind>& out) {
  out.clear();
  if (catalog.reading != GridEngineReading::SoGE819) return;
  const auto& cons = catalog.consumables();
  std::vector<std::pair<uint32_t, ChargeKind>> differ;
  each_amount(defaults, jobs.amount.of(j), [&](uint32_t k, double a) {
    const AttributeDef& d = catalog.at(cons[k]);
    if (is_slots(d)) return;  // the slot count, never a default
    if (std::isnan(a) && d.default_amount.value_or(0.0) > 0) differ.emplace_back(k, ChargeKind::WhereDefined);
    else if (a == 0) differ.emplace_back(k, ChargeKind::DefinedOnly);
  });
  if (differ.empty()) return;
  out.assign(cons.size(), ChargeKind::Everywhere);
  for (const auto& [k, kind] : differ) out[k] = kind;
}

}  // namespace

uint64_t fnv1a(std::string_view data, uint64_t h) noexcept {
  for (const unsigned char ch : data) h = (h ^ ch) * 1099511628211ULL;
  return h;
}

namespace {
constexpr size_t kDenseChargeKey = 16;
}  // namespace

namespace {

// A job's raw key is its request, soft request, slots, rule and the amounts as requested; a category's
// key starts with the first four (key_head), then its charges.
// The request indices and the choice index (first 12 bytes) are run-specific; the rest is content.
constexpr size_t kKeyIndices = 3 * sizeof(uint32_t);
void key_head(uint32_t request, uint32_t soft, uint32_t choice, uint32_t slots, AllocationRule rule, std::string& key) {
  key.assign(reinterpret_cast<const char*>(&request), sizeof(uint32_t));
  key.append(reinterpret_cast<const char*>(&soft), sizeof(uint32_t));
  key.append(reinterpret_cast<const char*>(&choice), sizeof(uint32_t));
  key.append(reinterpret_cast<const char*>(&slots), sizeof(uint32_t));
  key.push_back(static_cast<char>(rule));
}
void key_head(const JobTable& jobs, uint32_t j, std::string& key) {
  key_head(jobs.request[j], jobs.soft[j], jobs.choice_of(j), jobs.slots[j], jobs.rule[j], key);
}

// The charges part of a category's key: every value while the consumables are few (the key every format
// had so far), only the nonzero ones with their index when there are many (an Accelerator farm has a
// consumable per counted resource map, and most jobs charge few of them: the key stays small).
void key_charges(const ChargeVector& need, const ChargeVector& once, size_t width, std::string& key);

// A category's key after its head: its charges, their kinds (empty: every one Everywhere, the key as before)
// and its fit unit (none: the key as before).
void key_body(const ChargeVector& need, const ChargeVector& once, size_t width, const std::vector<ChargeKind>& kinds,
              const JobTable::FitUnit& fit, std::string& key) {
  key_charges(need, once, width, key);
  for (ChargeKind x : kinds) key.push_back(static_cast<char>('0' + static_cast<int>(x)));
  if (fit.fit > 0) {
    key.push_back('\x1f');
    for (const double x : {fit.fit, fit.limit, fit.tasks}) key.append(reinterpret_cast<const char*>(&x), sizeof x);
    if (fit.total > 0) key.append(reinterpret_cast<const char*>(&fit.total), sizeof fit.total);
  }
}

// A list of node picks' content: each pick's request text, count and apart flag (what makes two lists alike).
std::string node_pick_content(const JobTable& jobs, uint32_t list) {
  std::string out;
  for (const JobTable::NodePick& p : jobs.node_picks[list]) {
    for (const uint32_t r : p.requests) {
      out += jobs.request_text[r];
      out += '\0';
    }
    out += '\1';
    out.append(reinterpret_cast<const char*>(&p.count), sizeof p.count);
    out.push_back(p.apart ? '1' : '0');
  }
  return out;
}

// A choice's content: its solutions' request texts and amounts (what makes two choices alike).
std::string choice_content(const JobTable& jobs, uint32_t ch) {
  std::string out;
  if (ch == kNone) return out;
  const JobTable::Choice& c = jobs.choices[ch];
  auto entry = [&](const JobAmounts::Entry& e) {
    out.append(reinterpret_cast<const char*>(&e.consumable), sizeof e.consumable);
    out.append(reinterpret_cast<const char*>(&e.amount), sizeof e.amount);
  };
  for (size_t i = 0; i < c.request.size(); ++i) {
    out += '\x1e';
    out += jobs.request_text[c.request[i]];
    for (const JobAmounts::Entry& e : c.amounts[i]) entry(e);
  }
  if (c.outcome.empty()) return out;
  out += '\x1d';
  for (const JobAmounts::Entry& e : c.gate) entry(e);
  for (const JobTable::Choice::Outcome& o : c.outcome) {
    out += static_cast<char>('0' + static_cast<int>(o.kind));
    for (const uint32_t s : o.solutions) out.append(reinterpret_cast<const char*>(&s), sizeof s);
    out.append(reinterpret_cast<const char*>(&o.wait_on), sizeof o.wait_on);
    out += o.why;
    out += '\x1f';
  }
  return out;
}

// One step of a multiply-xorshift mix (splitmix64's finalizer).
uint64_t mix(uint64_t h, uint64_t v) noexcept {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}

// A hash of each row of requested amounts (equal amounts, equal hashes), computed once per row: the
// copies of one prototype (an Accelerator farm's million jobs, some thousand kinds) share a row.
std::vector<uint64_t> row_hashes(const JobAmounts& amounts) {
  std::vector<uint64_t> out(amounts.rows());
  tbb::parallel_for(tbb::blocked_range<uint32_t>(0, static_cast<uint32_t>(out.size()), 4096),
                    [&](const tbb::blocked_range<uint32_t>& range) {
                      for (uint32_t r = range.begin(); r < range.end(); ++r) {
                        uint64_t h = 0;
                        for (const JobAmounts::Entry& e : amounts.row_entries(r)) {
                          uint64_t bits = 0;
                          std::memcpy(&bits, &e.amount, sizeof bits);
                          h = mix(h, bits ^ (uint64_t{e.consumable} << 52));
                        }
                        out[r] = h;
                      }
                    });
  return out;
}

// A job's raw key as a table of raw keys keeps it beside the job showing it: the fields compared
// first, without a look at that job's columns (a cache miss each in a million jobs), then the amounts,
// equal at once when the rows are one.
struct RawFields {
  uint32_t request = 0, soft = 0, slots = 0, row = 0, choice = kNone;
  AllocationRule rule{};
  JobTable::FitUnit fit_unit{};
  uint32_t node_pick = kNone;
  JobTable::Fallback fallback{};
  JobTable::PeShape pe_shape{};
  static RawFields of(const JobTable& jobs, uint32_t j) noexcept {
    return {jobs.request[j], jobs.soft[j],        jobs.slots[j],        jobs.amount.row(j),  jobs.choice_of(j),
            jobs.rule[j],    jobs.fit_unit_of(j), jobs.node_pick_of(j), jobs.fallback_of(j), jobs.pe_shape_of(j)};
  }
};

// A hash of a job's raw key (equal raw keys, equal hashes), from its fields and its row's hash.
uint64_t raw_hash(const RawFields& f, const std::vector<uint64_t>& row_hash) noexcept {
  uint64_t h = mix(f.request, (uint64_t{f.soft} << 32) | f.slots);
  h = mix(h, (uint64_t{f.choice} << 8) | static_cast<uint64_t>(f.rule));
  if (f.fit_unit.fit > 0)
    h = mix(h, std::bit_cast<uint64_t>(f.fit_unit.fit) ^ std::bit_cast<uint64_t>(f.fit_unit.limit) ^
                   (std::bit_cast<uint64_t>(f.fit_unit.tasks) << 1) ^ (std::bit_cast<uint64_t>(f.fit_unit.total) << 2));
  if (f.node_pick != kNone) h = mix(h, 0x9e3779b97f4a7c15ULL ^ f.node_pick);
  if (f.fallback.request != kNone) h = mix(h, (uint64_t{f.fallback.request} << 32) | f.fallback.soft);
  if (!(f.pe_shape == JobTable::PeShape{}))
    h = mix(mix(h, (uint64_t{f.pe_shape.min_slots} << 32) | f.pe_shape.per_host),
            (uint64_t{f.pe_shape.master_only} << 32) | f.pe_shape.master);
  return mix(h, row_hash[f.row]);
}

// Raw keys met, by raw_hash: each the fields of its key, a job showing it and a value (a piece's raw
// key index, or a category); a hit is checked field by field and amount by amount, so hashes may
// collide.
class RawTable {
 public:
  /// The value of job j's raw key (fields `f`), or kNone with `slot` where to insert() it.
  uint32_t find(const JobTable& jobs, uint32_t j, const RawFields& f, uint64_t h, size_t& slot) const noexcept {
    const Entry* e = slots_.find(
        h,
        [&](const Entry& x) {
          if (x.fields.request != f.request || x.fields.soft != f.soft || x.fields.slots != f.slots ||
              x.fields.rule != f.rule || x.fields.choice != f.choice || !(x.fields.fit_unit == f.fit_unit) ||
              x.fields.node_pick != f.node_pick || !(x.fields.fallback == f.fallback) ||
              !(x.fields.pe_shape == f.pe_shape))
            return false;
          if (x.fields.row == f.row) return true;
          const auto a = jobs.amount.of(j), b = jobs.amount.of(x.job);  // the amounts bit for bit
          return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](const auto& p, const auto& q) {
                   return p.consumable == q.consumable && std::memcmp(&p.amount, &q.amount, sizeof(double)) == 0;
                 });
        },
        slot);
    return e == nullptr ? kNone : e->value;
  }
  void insert(size_t slot, uint64_t h, uint32_t j, const RawFields& f, uint32_t value) {
    slots_.insert(slot, h, {f, j, value});
  }

 private:
  struct Entry {
    RawFields fields;
    uint32_t job = kNone, value = kNone;
    bool empty() const noexcept { return job == kNone; }
  };
  HashSlots<Entry> slots_;
};

}  // namespace

namespace {
void key_charges(const ChargeVector& need, const ChargeVector& once, size_t width, std::string& key) {
  const bool sparse = width > kDenseChargeKey;
  for (const ChargeVector* vec : {&need, &once}) {
    if (sparse) {
      for (const ChargeVector::Entry& e : vec->nonzero()) {
        const double z = e.amount + 0.0;  // -0.0 and 0.0 are one key
        key.append(reinterpret_cast<const char*>(&e.k), sizeof(uint32_t));
        key.append(reinterpret_cast<const char*>(&z), sizeof(double));
      }
      key.push_back('|');
      continue;
    }
    for (uint32_t k = 0; k < width; ++k) {
      const double z = (*vec)[k] + 0.0;
      key.append(reinterpret_cast<const char*>(&z), sizeof(double));
    }
  }
}

// Pass 2 and after of categorize(): a raw key's category from its first job's charges, then the
// categories of the choices' solutions, the node picks and the fallbacks, each interned by its key.
class CategoryBuilder {
 public:
  CategoryBuilder(const Catalog& catalog, const JobTable& jobs, Categories& c)
      : catalog_(catalog),
        jobs_(jobs),
        c_(c),
        defaults_(charged_by_default(catalog)),
        width_(catalog.consumables().size()),
        none_(static_cast<uint32_t>(width_), {}) {}

  // The category of job j, the first of its raw key (fields f), found or added by its full key.
  uint32_t of_first_job(uint32_t j, const RawFields& f) {
    const bool fill = spreads(jobs_.rule[j]);
    if (fill) {
      fill_up_need(catalog_, defaults_, jobs_, j, need_, once_);
    } else {
      need_ = need_of(catalog_, defaults_, jobs_.amount.of(j), jobs_.slots[j]);
      once_ = none_;
    }
    key_head(jobs_, j, key_);
    job_charge_kinds(catalog_, defaults_, jobs_, j, kinds_);  // empty unless some kind differs
    key_body(need_, once_, width_, kinds_, f.fit_unit, key_);
    if (f.node_pick != kNone) {  // (none: the key as before)
      key_.push_back('\x1e');
      key_ += node_pick_content(jobs_, f.node_pick);
    }
    if (f.fallback.request != kNone) {  // (none: the key as before)
      key_.push_back('\x1d');
      key_ += jobs_.request_text[f.fallback.request];
      key_.push_back('\0');
      if (f.fallback.soft != 0) key_ += jobs_.request_text[f.fallback.soft];
    }
    key_pe_shape(f.pe_shape, key_);
    const uint32_t cat = intern(jobs_.request[j], jobs_.soft[j], jobs_.choice_of(j), jobs_.slots[j], jobs_.rule[j],
                                need_, once_, kinds_);
    set_fit_unit(cat, f.fit_unit);
    set_pe_shape(cat, f.pe_shape);
    if (f.node_pick != kNone) {
      pick_list_.resize(c_.size(), kNone);
      pick_list_[cat] = f.node_pick;
    }
    if (f.fallback.request != kNone) {
      fallback_of_.resize(c_.size());
      fallback_of_[cat] = {f.fallback, f.fit_unit, f.pe_shape};
    }
    return cat;
  }

  // The solutions of the categories that choose (JobTable::Choice): each a category of its own (one
  // with no job when no job asks for it alone), after every job's category.
  void add_solutions() {
    c_.solutions.resize(c_.size());
    const size_t job_categories = c_.size();
    std::vector<std::vector<uint32_t>> solutions_of_choice(jobs_.choices.size());
    for (size_t x = 0; x < job_categories; ++x) {
      const uint32_t ch = c_.choice[x];
      if (ch == kNone) continue;
      if (solutions_of_choice[ch].empty()) {
        const JobTable::Choice& choice = jobs_.choices[ch];
        for (size_t i = 0; i < choice.request.size(); ++i) {
          need_ = need_of(catalog_, defaults_, choice.amounts[i], c_.slots[x]);
          key_head(choice.request[i], 0, kNone, c_.slots[x], AllocationRule::PeSlots, key_);
          key_charges(need_, none_, width_, key_);
          solutions_of_choice[ch].push_back(
              intern(choice.request[i], 0, kNone, c_.slots[x], AllocationRule::PeSlots, need_, none_, {}));
        }
      }
      c_.solutions[x] = solutions_of_choice[ch];
    }
  }

  // The node picks of the categories that have some (JobTable::NodePick): each pick's request with one slot of
  // the picking category's charges is a category of its own, after the solutions.
  void add_node_picks() {
    for (size_t x = 0; x < pick_list_.size(); ++x) {
      if (pick_list_[x] == kNone) continue;
      const ChargeVector unit = c_.unit_charge[x];  // (a copy: intern grows the vectors)
      const std::vector<ChargeKind> unit_kinds = c_.charge_kind[x];
      std::vector<Categories::NodePick> picks;
      for (const JobTable::NodePick& p : jobs_.node_picks[pick_list_[x]]) {
        Categories::NodePick pick{{}, p.count, p.apart};
        for (const uint32_t r : p.requests) {
          key_head(r, 0, kNone, 1, AllocationRule::PeSlots, key_);
          key_body(unit, none_, width_, unit_kinds, {}, key_);
          pick.tiers.push_back(intern(r, 0, kNone, 1, AllocationRule::PeSlots, unit, none_, unit_kinds));
        }
        picks.push_back(std::move(pick));
      }
      c_.node_picks.resize(x + 1);
      c_.node_picks[x] = std::move(picks);
    }
  }

  // The fallbacks (JobTable::Fallback): the fallback request and soft request with the category's slots, rule,
  // charges and fit unit, a category of their own.
  void add_fallbacks() {
    for (size_t x = 0; x < fallback_of_.size(); ++x) {
      const auto [fb, fit, shape] = fallback_of_[x];
      if (fb.request == kNone) continue;
      const ChargeVector unit = c_.unit_charge[x], master = spreads(c_.rule[x]) ? c_.master_charge[x] : none_;
      const std::vector<ChargeKind> kinds_x = c_.charge_kind[x];
      const uint32_t slots = c_.slots[x];
      const AllocationRule rule = c_.rule[x];
      key_head(fb.request, fb.soft, kNone, slots, rule, key_);
      key_body(unit, master, width_, kinds_x, fit, key_);
      key_pe_shape(shape, key_);
      const uint32_t f = intern(fb.request, fb.soft, kNone, slots, rule, unit, master, kinds_x);
      set_fit_unit(f, fit);
      set_pe_shape(f, shape);
      c_.fallback.resize(x + 1, kNone);
      c_.fallback[x] = f;
    }
    c_.solutions.resize(c_.size());
  }

  // The master queue requests (JobTable::PeShape::master, qsub -masterq) and master-only ones (-masterq beside
  // -q): each with one slot of its category's charges is a category of its own, after the fallbacks
  // (Categories::master_of, master_only_of).
  void add_masters() {
    const size_t n = std::min(c_.size(), c_.pe_shape.size());
    for (size_t x = 0; x < n; ++x) {
      const JobTable::PeShape shape = c_.pe_shape[x];
      if (shape.master == kNone) continue;
      const ChargeVector unit = c_.unit_charge[x];  // (a copy: intern grows the vectors)
      const std::vector<ChargeKind> unit_kinds = c_.charge_kind[x];
      auto one_slot = [&](uint32_t r) {
        key_head(r, 0, kNone, 1, AllocationRule::PeSlots, key_);
        key_body(unit, none_, width_, unit_kinds, {}, key_);
        return intern(r, 0, kNone, 1, AllocationRule::PeSlots, unit, none_, unit_kinds);
      };
      c_.master_of.resize(x + 1, kNone);
      c_.master_of[x] = one_slot(shape.master);
      if (shape.master_only == kNone) continue;
      c_.master_only_of.resize(x + 1, kNone);
      c_.master_only_of[x] = one_slot(shape.master_only);
    }
    c_.solutions.resize(c_.size());
  }

 private:
  // The category of key_ (as built), added if new.
  uint32_t intern(uint32_t request, uint32_t soft, uint32_t choice, uint32_t slots, AllocationRule rule,
                  const ChargeVector& unit, const ChargeVector& master, const std::vector<ChargeKind>& charge_kinds) {
    auto [it, fresh] = index_.emplace(key_, static_cast<uint32_t>(c_.request.size()));
    if (fresh) {
      c_.request.push_back(request);
      c_.soft.push_back(soft);
      c_.slots.push_back(slots);
      c_.unit_charge.push_back(unit);
      // ($pe_slots: none, and no vector: a farm of many consumables pays its width once a category)
      c_.master_charge.push_back(spreads(rule) ? master : ChargeVector{});
      c_.charge_kind.push_back(charge_kinds);
      c_.rule.push_back(rule);
      c_.choice.push_back(choice);
      // The content: the request texts, then the slot count, rule and charges, then the choice's
      // solutions; the indices (first kKeyIndices bytes of `key`) are run-specific, the texts are not.
      const std::string& text = jobs_.request_text[request];
      const std::string_view rest(key_.data() + kKeyIndices, key_.size() - kKeyIndices);
      const std::string solutions = choice_content(jobs_, choice);
      uint64_t h = fnv1a(text);
      if (soft != 0) h = fnv1a(jobs_.request_text[soft], h ^ 0x5f);
      h = fnv1a(rest, h);
      if (!solutions.empty()) h = fnv1a(solutions, h ^ 0x3c);
      c_.hash.push_back(h);
      std::string content = text;
      content += '\0';
      if (soft != 0) content += jobs_.request_text[soft];
      content += '\0';
      content += rest;
      content += solutions;
      c_.key.push_back(std::move(content));
      c_.job_count.push_back(0);
    }
    return it->second;
  }
  void set_fit_unit(uint32_t cat, const JobTable::FitUnit& fit) {  // (none: no column)
    if (fit.fit <= 0) return;
    c_.fit_unit.resize(c_.size());
    c_.fit_unit[cat] = fit;
  }
  void set_pe_shape(uint32_t cat, const JobTable::PeShape& shape) {  // (none: no column)
    if (shape == JobTable::PeShape{}) return;
    c_.pe_shape.resize(c_.size());
    c_.pe_shape[cat] = shape;
  }
  // A PE shape at the key's end (none: the key as before; no master-only request: the three fields alone).
  static void key_pe_shape(const JobTable::PeShape& shape, std::string& key) {
    if (shape == JobTable::PeShape{}) return;
    key.push_back('\x1c');
    const uint32_t fields[4] = {shape.min_slots, shape.per_host, shape.master, shape.master_only};
    key.append(reinterpret_cast<const char*>(fields), sizeof(uint32_t) * (shape.master_only == kNone ? 3 : 4));
  }

  const Catalog& catalog_;
  const JobTable& jobs_;
  Categories& c_;
  std::unordered_map<std::string, uint32_t> index_;
  const std::vector<uint32_t> defaults_;
  const size_t width_;
  const ChargeVector none_;
  ChargeVector need_, once_;
  std::vector<ChargeKind> kinds_;
  std::string key_;
  std::vector<uint32_t> pick_list_;  // per job category, up to the last with node picks: its JobTable::node_picks
  struct FallbackOf {
    JobTable::Fallback fallback{};
    JobTable::FitUnit fit_unit{};
    JobTable::PeShape pe_shape{};
  };
  std::vector<FallbackOf> fallback_of_;  // per job category, up to the last with a fallback
};

}  // namespace

Categories categorize(const Catalog& catalog, const JobTable& jobs) {
  Categories c;
  c.of_job.assign(jobs.size(), kNone);
  // Two levels: jobs with the same raw key (request, soft request, slots, rule and the amounts as
  // requested) are one category without computing their charges; a raw key seen for the first time
  // computes them and finds its category by the full key (two raw keys may charge alike: an amount
  // requested equal to the default). The raw key costs what the job requested, not the farm's
  // consumable count.
  // Pass 1, in parallel over pieces of jobs: each piece's distinct raw keys in the order they appear,
  // with their first job, hash and job count, and each job's index among them. Raw keys are compared
  // field by field (RawTable), never built.
  constexpr size_t kPiece = 65536;
  struct Piece {
    std::vector<uint64_t> hash;
    std::vector<uint32_t> first_job, jobs;
  };
  std::vector<Piece> pieces((jobs.size() + kPiece - 1) / kPiece);
  std::vector<uint32_t> local(jobs.size(), kNone);
  const std::vector<uint64_t> row_hash = row_hashes(jobs.amount);
  tbb::parallel_for(size_t{0}, pieces.size(), [&](size_t p) {
    Piece& piece = pieces[p];
    RawTable seen;
    const size_t end = std::min(jobs.size(), (p + 1) * kPiece);
    for (size_t j = p * kPiece; j < end; ++j) {
      const auto job = static_cast<uint32_t>(j);
      if (jobs.rejected(job)) continue;
      const RawFields f = RawFields::of(jobs, job);
      const uint64_t h = raw_hash(f, row_hash);
      size_t slot = 0;
      uint32_t r = seen.find(jobs, job, f, h, slot);
      if (r == kNone) {
        r = static_cast<uint32_t>(piece.first_job.size());
        seen.insert(slot, h, job, f, r);
        piece.hash.push_back(h);
        piece.first_job.push_back(job);
        piece.jobs.push_back(0);
      }
      local[j] = r;
      ++piece.jobs[r];
    }
  });
  // Pass 2, in piece order (so categories are numbered as the jobs first show them): a raw key met for
  // the first time finds its category from its first job's charges; then the solutions', node picks'
  // and fallbacks' categories.
  CategoryBuilder builder(catalog, jobs, c);
  RawTable raw_index;
  std::vector<std::vector<uint32_t>> category_of(pieces.size());
  for (size_t p = 0; p < pieces.size(); ++p) {
    Piece& piece = pieces[p];
    category_of[p].resize(piece.first_job.size());
    for (size_t r = 0; r < piece.first_job.size(); ++r) {
      const uint32_t j = piece.first_job[r];
      const RawFields f = RawFields::of(jobs, j);
      size_t slot = 0;
      uint32_t cat = raw_index.find(jobs, j, f, piece.hash[r], slot);
      if (cat == kNone) {
        cat = builder.of_first_job(j, f);
        raw_index.insert(slot, piece.hash[r], j, f, cat);
      }
      category_of[p][r] = cat;
      c.job_count[cat] += piece.jobs[r];
    }
  }
  builder.add_solutions();
  builder.add_node_picks();
  builder.add_fallbacks();
  builder.add_masters();
  // Pass 3, in parallel: each job's category.
  tbb::parallel_for(size_t{0}, pieces.size(), [&](size_t p) {
    const size_t end = std::min(jobs.size(), (p + 1) * kPiece);
    for (size_t j = p * kPiece; j < end; ++j)
      if (local[j] != kNone) c.of_job[j] = category_of[p][local[j]];
  });
  return c;
}

}  // namespace colmatch
