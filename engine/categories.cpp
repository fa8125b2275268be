#include "engine/categories.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <unordered_map>

#include <tbb/parallel_for.h>

#include "engine/hash_slots.hpp"

namespace colmatch {

void job_need(const Catalog& catalog, const JobTable& jobs, uint32_t j, std::vector<double>& out) {
  const auto& cons = catalog.consumables();
  out.resize(cons.size());
  const double slots = jobs.slots[j];
  for (size_t k = 0; k < cons.size(); ++k) {
    const AttributeDef& d = catalog.at(cons[k]);
    double a = jobs.amount.at(k, j);
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

void fill_up_need(const Catalog& catalog, const JobTable& jobs, uint32_t j, std::vector<double>& per_instance,
                  std::vector<double>& per_job) {
  const auto& cons = catalog.consumables();
  per_instance.assign(cons.size(), 0);
  per_job.assign(cons.size(), 0);
  for (size_t k = 0; k < cons.size(); ++k) {
    const AttributeDef& d = catalog.at(cons[k]);
    const double a = jobs.amount.at(k, j);
    if (d.name == "slots") {
      if (std::isnan(a)) per_instance[k] = 1;
      else per_job[k] = a;
      continue;
    }
    const double amount = std::isnan(a) ? d.default_amount.value_or(0.0) : a;
    if (d.scope == ConsumeScope::PerSlot) per_instance[k] = amount;
    else per_job[k] = amount;
  }
}

void job_charge_kinds(const Catalog& catalog, const JobTable& jobs, uint32_t j, std::vector<ChargeKind>& out) {
  out.clear();
  if (catalog.reading != GridEngineReading::SoGE819) return;
  const auto& cons = catalog.consumables();
  bool any = false;
  out.assign(cons.size(), ChargeKind::Everywhere);  // out's storage is reused from job to job
  for (size_t k = 0; k < cons.size(); ++k) {
    const AttributeDef& d = catalog.at(cons[k]);
    if (d.name == "slots") continue;  // the slot count, never a default
    const double a = jobs.amount.at(k, j);
    if (std::isnan(a) && d.default_amount.value_or(0.0) > 0) out[k] = ChargeKind::WhereDefined;
    else if (a == 0) out[k] = ChargeKind::DefinedOnly;
    any = any || out[k] != ChargeKind::Everywhere;
  }
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
void key_head(const JobTable& jobs, uint32_t j, std::string& key) {
  key.assign(reinterpret_cast<const char*>(&jobs.request[j]), sizeof(uint32_t));
  key.append(reinterpret_cast<const char*>(&jobs.soft[j]), sizeof(uint32_t));
  key.append(reinterpret_cast<const char*>(&jobs.slots[j]), sizeof(uint32_t));
  key.push_back(static_cast<char>(jobs.rule[j]));
}

// Whether jobs j and r have one raw key (the amounts bit for bit).
bool same_raw(const JobTable& jobs, uint32_t j, uint32_t r) noexcept {
  if (jobs.request[j] != jobs.request[r] || jobs.soft[j] != jobs.soft[r] || jobs.slots[j] != jobs.slots[r] ||
      jobs.rule[j] != jobs.rule[r])
    return false;
  const auto a = jobs.amount.of(j), b = jobs.amount.of(r);
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].consumable != b[i].consumable || std::memcmp(&a[i].amount, &b[i].amount, sizeof(double)) != 0)
      return false;
  return true;
}

// A hash of a job's raw key (equal raw keys, equal hashes).
uint64_t raw_hash(const JobTable& jobs, uint32_t j) noexcept {
  auto mix = [](uint64_t h, uint64_t v) {  // one step of a multiply-xorshift mix (splitmix64's finalizer)
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
    return h ^ (h >> 31);
  };
  uint64_t h = mix(jobs.request[j], (uint64_t{jobs.soft[j]} << 32) | jobs.slots[j]);
  h = mix(h, static_cast<uint64_t>(jobs.rule[j]));
  for (const JobAmounts::Entry& e : jobs.amount.of(j)) {
    uint64_t bits = 0;
    std::memcpy(&bits, &e.amount, sizeof bits);
    h = mix(h, bits ^ (uint64_t{e.consumable} << 52));
  }
  return h;
}

// Raw keys met, by raw_hash: each a job showing the key and a value (a piece's raw key index, or a
// category); a hit is checked field by field (same_raw), so hashes may collide.
class RawTable {
 public:
  /// The value of job j's raw key, or kNone with `slot` where to insert() it.
  uint32_t find(const JobTable& jobs, uint32_t j, uint64_t h, size_t& slot) const noexcept {
    const Entry* e = slots_.find(
        h, [&](const Entry& x) { return same_raw(jobs, j, x.job); }, slot);
    return e == nullptr ? kNone : e->value;
  }
  void insert(size_t slot, uint64_t h, uint32_t j, uint32_t value) { slots_.insert(slot, h, {j, value}); }

 private:
  struct Entry {
    uint32_t job = kNone, value = kNone;
    bool empty() const noexcept { return job == kNone; }
  };
  HashSlots<Entry> slots_;
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
  // field by field (same_raw), never built.
  constexpr size_t kPiece = 65536;
  struct Piece {
    std::vector<uint64_t> hash;
    std::vector<uint32_t> first_job, jobs;
  };
  std::vector<Piece> pieces((jobs.size() + kPiece - 1) / kPiece);
  std::vector<uint32_t> local(jobs.size(), kNone);
  tbb::parallel_for(size_t{0}, pieces.size(), [&](size_t p) {
    Piece& piece = pieces[p];
    RawTable seen;
    const size_t end = std::min(jobs.size(), (p + 1) * kPiece);
    for (size_t j = p * kPiece; j < end; ++j) {
      const auto job = static_cast<uint32_t>(j);
      if (jobs.rejected(job)) continue;
      const uint64_t h = raw_hash(jobs, job);
      size_t slot = 0;
      uint32_t r = seen.find(jobs, job, h, slot);
      if (r == kNone) {
        r = static_cast<uint32_t>(piece.first_job.size());
        seen.insert(slot, h, job, r);
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
  for (size_t p = 0; p < pieces.size(); ++p) {
    Piece& piece = pieces[p];
    category_of[p].resize(piece.first_job.size());
    for (size_t r = 0; r < piece.first_job.size(); ++r) {
      const uint32_t j = piece.first_job[r];
      size_t slot = 0;
      uint32_t cat = raw_index.find(jobs, j, piece.hash[r], slot);
      if (cat == kNone) {
        const bool fill = jobs.rule[j] == AllocationRule::FillUp;
        if (fill) {
          fill_up_need(catalog, jobs, j, need, once);
        } else {
          job_need(catalog, jobs, j, need);
          std::fill(once.begin(), once.end(), 0.0);
        }
        key_head(jobs, j, key);
        // The charges: every value while the consumables are few (the key every format had so far),
        // only the nonzero ones with their index when there are many (an Accelerator farm has a
        // consumable per counted resource map, and most jobs charge few of them: the key stays small).
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
        job_charge_kinds(catalog, jobs, j, kinds);  // empty unless some kind differs: the key as before
        for (ChargeKind x : kinds) key.push_back(static_cast<char>('0' + static_cast<int>(x)));
        auto [it, fresh] = index.emplace(key, static_cast<uint32_t>(c.request.size()));
        if (fresh) {
          c.request.push_back(jobs.request[j]);
          c.soft.push_back(jobs.soft[j]);
          c.slots.push_back(jobs.slots[j]);
          c.need.push_back(need);
          c.master_need.push_back(once);
          c.charge_kind.push_back(kinds);
          c.rule.push_back(jobs.rule[j]);
          // The content: the request texts, then the slot count, rule and charges; the request indices
          // (first 8 bytes of `key`) are run-specific, the texts are not.
          const std::string& text = jobs.request_text[jobs.request[j]];
          const std::string_view rest(key.data() + 2 * sizeof(uint32_t), key.size() - 2 * sizeof(uint32_t));
          uint64_t h = fnv1a(text);
          if (jobs.soft[j] != 0) h = fnv1a(jobs.request_text[jobs.soft[j]], h ^ 0x5f);
          c.hash.push_back(fnv1a(rest, h));
          std::string content = text;
          content += '\0';
          if (jobs.soft[j] != 0) content += jobs.request_text[jobs.soft[j]];
          content += '\0';
          content += rest;
          c.key.push_back(std::move(content));
          c.job_count.push_back(0);
        }
        cat = it->second;
        raw_index.insert(slot, piece.hash[r], j, cat);
      }
      category_of[p][r] = cat;
      c.job_count[cat] += piece.jobs[r];
    }
  }
  // Pass 3, in parallel: each job's category.
  tbb::parallel_for(size_t{0}, pieces.size(), [&](size_t p) {
    const size_t end = std::min(jobs.size(), (p + 1) * kPiece);
    for (size_t j = p * kPiece; j < end; ++j)
      if (local[j] != kNone) c.of_job[j] = category_of[p][local[j]];
  });
  return c;
}

}  // namespace colmatch
