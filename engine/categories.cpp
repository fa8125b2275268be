#include "engine/categories.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <unordered_map>

#include <tbb/parallel_for.h>

#include "engine/hash_slots.hpp"

namespace colmatch {

namespace {

// Job j's requested amount of each consumable in catalog order, NaN where it requested none: `fn(k, a)`
// for k = 0, 1, ... (one pass over the job's entries, which are in consumable order: a farm with
// hundreds of consumables, an Accelerator farm's counted maps, and jobs that request a few).
template <typename Fn>
void each_amount(const Catalog& catalog, std::span<const JobAmounts::Entry> entries, Fn&& fn) {
  size_t e = 0;
  const size_t n = catalog.consumables().size();
  for (size_t k = 0; k < n; ++k) {
    double a = std::numeric_limits<double>::quiet_NaN();
    if (e < entries.size() && entries[e].consumable == k) a = entries[e++].amount;
    fn(k, a);
  }
}

template <typename Fn>
void each_amount(const Catalog& catalog, const JobTable& jobs, uint32_t j, Fn&& fn) {
  each_amount(catalog, jobs.amount.of(j), std::forward<Fn>(fn));
}

// Whether `d` is the built-in `slots` consumable.
bool is_slots(const AttributeDef& d) noexcept { return d.name == "slots"; }

}  // namespace

namespace {

// job_need over the amounts `entries` of a job of `slots` slots.
void need_of(const Catalog& catalog, std::span<const JobAmounts::Entry> entries, double slots,
             std::vector<double>& out) {
  const auto& cons = catalog.consumables();
  out.resize(cons.size());
  each_amount(catalog, entries, [&](size_t k, double a) {
    const AttributeDef& d = catalog.at(cons[k]);
    if (std::isnan(a)) {
      if (is_slots(d)) {
        out[k] = slots;  // the built-in slots consumable is charged once per slot
        return;
      }
      a = d.default_amount.value_or(0.0);
    }
    out[k] = (d.scope == ConsumeScope::PerSlot && !is_slots(d)) ? a * slots : a;
  });
}

}  // namespace

void job_need(const Catalog& catalog, const JobTable& jobs, uint32_t j, std::vector<double>& out) {
  need_of(catalog, jobs.amount.of(j), jobs.slots[j], out);
}

void fill_up_need(const Catalog& catalog, const JobTable& jobs, uint32_t j, std::vector<double>& per_instance,
                  std::vector<double>& per_job) {
  const auto& cons = catalog.consumables();
  per_instance.assign(cons.size(), 0);
  per_job.assign(cons.size(), 0);
  each_amount(catalog, jobs, j, [&](size_t k, double a) {
    const AttributeDef& d = catalog.at(cons[k]);
    if (is_slots(d)) {
      if (std::isnan(a)) per_instance[k] = 1;
      else per_job[k] = a;
      return;
    }
    const double amount = std::isnan(a) ? d.default_amount.value_or(0.0) : a;
    if (d.scope == ConsumeScope::PerSlot) per_instance[k] = amount;
    else per_job[k] = amount;
  });
}

void job_charge_kinds(const Catalog& catalog, const JobTable& jobs, uint32_t j, std::vector<ChargeKind>& out) {
  out.clear();
  if (catalog.reading != GridEngineReading::SoGE819) return;
  const auto& cons = catalog.consumables();
  bool any = false;
  out.assign(cons.size(), ChargeKind::Everywhere);  // out's storage is reused from job to job
  each_amount(catalog, jobs, j, [&](size_t k, double a) {
    const AttributeDef& d = catalog.at(cons[k]);
    if (is_slots(d)) return;  // the slot count, never a default
    if (std::isnan(a) && d.default_amount.value_or(0.0) > 0) out[k] = ChargeKind::WhereDefined;
    else if (a == 0) out[k] = ChargeKind::DefinedOnly;
    any = any || out[k] != ChargeKind::Everywhere;
  });
  if (!any) out.clear();
}

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
void key_charges(const std::vector<double>& need, const std::vector<double>& once, std::string& key);

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
  static RawFields of(const JobTable& jobs, uint32_t j) noexcept {
    return {jobs.request[j], jobs.soft[j], jobs.slots[j], jobs.amount.row(j), jobs.choice_of(j), jobs.rule[j]};
  }
};

// A hash of a job's raw key (equal raw keys, equal hashes), from its fields and its row's hash.
uint64_t raw_hash(const RawFields& f, const std::vector<uint64_t>& row_hash) noexcept {
  uint64_t h = mix(f.request, (uint64_t{f.soft} << 32) | f.slots);
  h = mix(h, (uint64_t{f.choice} << 8) | static_cast<uint64_t>(f.rule));
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
              x.fields.rule != f.rule || x.fields.choice != f.choice)
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
void key_charges(const std::vector<double>& need, const std::vector<double>& once, std::string& key) {
  const bool sparse = need.size() > kDenseChargeKey;
  for (const auto* vec : {&need, &once}) {
    for (uint32_t k = 0; k < vec->size(); ++k) {
      const double z = (*vec)[k] + 0.0;  // -0.0 and 0.0 are one key
      if (sparse && z == 0) continue;
      if (sparse) key.append(reinterpret_cast<const char*>(&k), sizeof(uint32_t));
      key.append(reinterpret_cast<const char*>(&z), sizeof(double));
    }
    if (sparse) key.push_back('|');
  }
}
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
  // the first time finds its category from its first job's charges.
  std::unordered_map<std::string, uint32_t> index;
  RawTable raw_index;
  std::vector<double> need, once(catalog.consumables().size(), 0.0);
  std::vector<ChargeKind> kinds;
  std::string key;
  std::vector<std::vector<uint32_t>> category_of(pieces.size());
  // The category of `key` (as built), added if new.
  auto intern = [&](uint32_t request, uint32_t soft, uint32_t choice, uint32_t slots, AllocationRule rule,
                    const std::vector<double>& unit, const std::vector<double>& master,
                    const std::vector<ChargeKind>& charge_kinds) {
    auto [it, fresh] = index.emplace(key, static_cast<uint32_t>(c.request.size()));
    if (fresh) {
      c.request.push_back(request);
      c.soft.push_back(soft);
      c.slots.push_back(slots);
      c.unit_charge.push_back(unit);
      // ($pe_slots: none, and no vector: a farm of many consumables pays its width once a category)
      c.master_charge.push_back(rule == AllocationRule::FillUp ? master : std::vector<double>{});
      c.charge_kind.push_back(charge_kinds);
      c.rule.push_back(rule);
      c.choice.push_back(choice);
      // The content: the request texts, then the slot count, rule and charges, then the choice's
      // solutions; the indices (first kKeyIndices bytes of `key`) are run-specific, the texts are not.
      const std::string& text = jobs.request_text[request];
      const std::string_view rest(key.data() + kKeyIndices, key.size() - kKeyIndices);
      const std::string solutions = choice_content(jobs, choice);
      uint64_t h = fnv1a(text);
      if (soft != 0) h = fnv1a(jobs.request_text[soft], h ^ 0x5f);
      h = fnv1a(rest, h);
      if (!solutions.empty()) h = fnv1a(solutions, h ^ 0x3c);
      c.hash.push_back(h);
      std::string content = text;
      content += '\0';
      if (soft != 0) content += jobs.request_text[soft];
      content += '\0';
      content += rest;
      content += solutions;
      c.key.push_back(std::move(content));
      c.job_count.push_back(0);
    }
    return it->second;
  };
  for (size_t p = 0; p < pieces.size(); ++p) {
    Piece& piece = pieces[p];
    category_of[p].resize(piece.first_job.size());
    for (size_t r = 0; r < piece.first_job.size(); ++r) {
      const uint32_t j = piece.first_job[r];
      const RawFields f = RawFields::of(jobs, j);
      size_t slot = 0;
      uint32_t cat = raw_index.find(jobs, j, f, piece.hash[r], slot);
      if (cat == kNone) {
        const bool fill = jobs.rule[j] == AllocationRule::FillUp;
        if (fill) {
          fill_up_need(catalog, jobs, j, need, once);
        } else {
          job_need(catalog, jobs, j, need);
          std::fill(once.begin(), once.end(), 0.0);
        }
        key_head(jobs, j, key);
        key_charges(need, once, key);
        job_charge_kinds(catalog, jobs, j, kinds);  // empty unless some kind differs: the key as before
        for (ChargeKind x : kinds) key.push_back(static_cast<char>('0' + static_cast<int>(x)));
        cat = intern(jobs.request[j], jobs.soft[j], jobs.choice_of(j), jobs.slots[j], jobs.rule[j], need, once, kinds);
        raw_index.insert(slot, piece.hash[r], j, f, cat);
      }
      category_of[p][r] = cat;
      c.job_count[cat] += piece.jobs[r];
    }
  }
  // The solutions of the categories that choose (JobTable::Choice): each a category of its own (one
  // with no job when no job asks for it alone), after every job's category.
  c.solutions.resize(c.size());
  const size_t job_categories = c.size();
  std::vector<std::vector<uint32_t>> solutions_of_choice(jobs.choices.size());
  for (size_t x = 0; x < job_categories; ++x) {
    const uint32_t ch = c.choice[x];
    if (ch == kNone) continue;
    if (solutions_of_choice[ch].empty()) {
      const JobTable::Choice& choice = jobs.choices[ch];
      for (size_t i = 0; i < choice.request.size(); ++i) {
        need_of(catalog, choice.amounts[i], c.slots[x], need);
        std::fill(once.begin(), once.end(), 0.0);
        key_head(choice.request[i], 0, kNone, c.slots[x], AllocationRule::PeSlots, key);
        key_charges(need, once, key);
        solutions_of_choice[ch].push_back(
            intern(choice.request[i], 0, kNone, c.slots[x], AllocationRule::PeSlots, need, once, {}));
      }
    }
    c.solutions[x] = solutions_of_choice[ch];
  }
  c.solutions.resize(c.size());
  // Pass 3, in parallel: each job's category.
  tbb::parallel_for(size_t{0}, pieces.size(), [&](size_t p) {
    const size_t end = std::min(jobs.size(), (p + 1) * kPiece);
    for (size_t j = p * kPiece; j < end; ++j)
      if (local[j] != kNone) c.of_job[j] = category_of[p][local[j]];
  });
  return c;
}

}  // namespace colmatch
