#include "engine/match/eligibility.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include "engine/model/capacity.hpp"
#include "engine/model/wildcard.hpp"

namespace colmatch {
namespace {

// Clause masks already computed by one thread in one compute_eligibility call, by the clause's bytes:
// categories share most of their clauses (an Accelerator farm's 6,757 categories ask some thousand
// distinct ones), and a clause's mask over the taskers depends on nothing else. Bounded: past
// kBudgetBytes of masks a thread computes the rest each time.
class ClauseMasks {
 public:
  static constexpr size_t kBudgetBytes = size_t{64} << 20;
  /// The clause's identity: every field, lengths before texts (two clauses with one key are equal).
  static void key_of(const Clause& c, std::string& key) {
    key.clear();
    auto put = [&key](const void* p, size_t n) { key.append(static_cast<const char*>(p), n); };
    const auto op = static_cast<uint8_t>(c.op);
    const uint8_t expression = c.expression ? 1 : 0;
    const auto nums = static_cast<uint32_t>(c.nums.size()), strs = static_cast<uint32_t>(c.strs.size());
    put(&c.attr, sizeof c.attr);
    put(&op, 1);
    put(&expression, 1);
    put(&nums, sizeof nums);
    for (const double v : c.nums) put(&v, sizeof v);
    put(&strs, sizeof strs);
    for (const std::string& t : c.strs) {
      const auto n = static_cast<uint32_t>(t.size());
      put(&n, sizeof n);
      key.append(t);
    }
  }
  const std::vector<uint64_t>* find(const std::string& key) const {
    const auto it = masks_.find(key);
    return it == masks_.end() ? nullptr : &it->second;
  }
  void add(const std::string& key, const uint64_t* mask, size_t words) {
    const size_t bytes = words * sizeof(uint64_t) + key.size();
    if (bytes_ + bytes > kBudgetBytes) return;
    bytes_ += bytes;
    masks_.emplace(key, std::vector<uint64_t>(mask, mask + words));
  }

 private:
  std::unordered_map<std::string, std::vector<uint64_t>> masks_;
  size_t bytes_ = 0;
};

class Evaluator {
 public:
  // One value against a clause, without building the clause's plan: used for single values (the
  // global level, distinct host values, one-row refreshes), which must not cost a pass over the
  // dictionary (patterns over host names would).
  static bool value_holds(const Clause& c, const Column& col, double num, uint32_t id);

  Evaluator(const TaskerTable& t, const kernels::KernelTable& k, ClauseMasks* memo = nullptr)
      : t_(t), k_(k), n_(t.size()), nw_(kernels::words_for(t.size())), memo_(memo) {}

  void eval(const Request& r, uint64_t* out, size_t depth = 0) {
    switch (r.kind) {
      case Request::Kind::Clause: clause(r.clause, out); return;
      case Request::Kind::Not:
        eval(r.kids[0], out, depth + 1);
        kernels::invert(out, n_);
        return;
      case Request::Kind::And:
      case Request::Kind::Or: {
        if (r.kids.empty()) {
          if (r.kind == Request::Kind::And) kernels::fill_ones(out, n_);
          else std::fill(out, out + nw_, 0);
          return;
        }
        eval(r.kids[0], out, depth + 1);
        uint64_t* tmp = scratch(depth);
        for (size_t i = 1; i < r.kids.size(); ++i) {
          eval(r.kids[i], tmp, depth + 1);
          if (r.kind == Request::Kind::And) k_.and_words(out, tmp, nw_);
          else k_.or_words(out, tmp, nw_);
        }
        return;
      }
    }
  }

 private:
  // How one clause is decided for a row value, worked out once per clause (per category), then
  // applied to each level's rows.
  enum class PlanKind : uint8_t { Numeric, Eq, Bits, Lut };
  struct Plan {
    PlanKind kind = PlanKind::Numeric;
    std::optional<uint32_t> id;  // Eq: the dictionary id of the value, if any tasker has it
    uint32_t bits = 0;           // Bits: membership of dictionary ids < 32
  };

  uint64_t* scratch(size_t depth) {
    // depth d uses slot d for And/Or temporaries; slots are reused across siblings.
    while (bufs_.size() <= depth + 1) bufs_.emplace_back(nw_);
    return bufs_[depth].data();
  }
  uint64_t* clause_tmp() {
    if (clause_buf_.size() != nw_) clause_buf_.assign(nw_, 0);
    return clause_buf_.data();
  }
  uint64_t* level_tmp() {
    if (level_buf_.size() != nw_) level_buf_.assign(nw_, 0);
    return level_buf_.data();
  }

  Plan plan(const Clause& c, const Column& col) {
    Plan p;
    if (is_numeric(col.type)) return p;
    if (col.type != AttrType::ReString && !c.expression && c.strs.size() == 1 && !col.multi) {
      p.kind = PlanKind::Eq;
      p.id = col.dict.find(c.strs[0]);
      return p;
    }
    // Patterns, expressions or lists: decide once per distinct dictionary value.
    const size_t d = col.dict.size();
    lut_.assign(d == 0 ? 1 : d, 0);
    if (c.expression) {  // Grid Engine 8.1.9 wildcard expressions, on each value of a set
      for (const auto& s : c.strs) {
        const WildcardExpression ex(s);
        for (uint32_t v = 0; v < d; ++v) {
          if (lut_[v]) continue;
          if (col.multi) {
            for (std::string_view e : set_elements(col.dict.value(v)))
              if (ex.matches(e)) {
                lut_[v] = 0xFFFFFFFFu;
                break;
              }
          } else if (ex.matches(col.dict.value(v))) {
            lut_[v] = 0xFFFFFFFFu;
          }
        }
      }
    } else if (col.multi && col.type != AttrType::ReString && col.dict.elements_indexed()) {
      // a set matches when it holds one of the request's values: the entries holding each, from the
      // dictionary's element index (no scan of the distinct sets)
      for (const auto& s : c.strs)
        for (const uint32_t v : col.dict.entries_with(s)) lut_[v] = 0xFFFFFFFFu;
    } else if (col.multi) {  // a set matches when one of its values matches one of the request's
      std::vector<WildcardPattern> pats;
      if (col.type == AttrType::ReString)
        for (const auto& s : c.strs) pats.emplace_back(s);
      for (uint32_t v = 0; v < d; ++v)
        for (std::string_view e : set_elements(col.dict.value(v))) {
          bool hit = false;
          if (col.type == AttrType::ReString) {
            for (const auto& pat : pats) hit = hit || pat.matches(e);
          } else {
            hit = std::binary_search(c.strs.begin(), c.strs.end(), e);  // canonical lists are sorted
          }
          if (hit) {
            lut_[v] = 0xFFFFFFFFu;
            break;
          }
        }
    } else if (col.type == AttrType::ReString) {
      for (const auto& s : c.strs) {
        const WildcardPattern pat(s);
        for (uint32_t v = 0; v < d; ++v)
          if (!lut_[v] && pat.matches(col.dict.value(v))) lut_[v] = 0xFFFFFFFFu;
      }
    } else {
      for (const auto& s : c.strs)
        if (const auto id = col.dict.find(s)) lut_[*id] = 0xFFFFFFFFu;
    }
    if (c.op == Relop::NE)
      for (auto& x : lut_) x = ~x;
    if (d <= 32) {
      // Small dictionary (arch, os, site, GPU model...): the LUT fits one register, so one
      // variable shift per tasker replaces a gather.
      p.kind = PlanKind::Bits;
      for (uint32_t v = 0; v < d; ++v) p.bits |= (lut_[v] & 1u) << v;
    } else {
      p.kind = PlanKind::Lut;
    }
    return p;
  }

  // The clause over rows with values `num` / `ids` (presence not applied).
  void apply(const Plan& p, const Clause& c, const double* num, const uint32_t* ids, uint64_t* out) {
    switch (p.kind) {
      case PlanKind::Numeric:
        k_.cmp_f64(num, n_, c.op, c.nums[0], out);
        if (c.nums.size() > 1) {  // EQ over a list: any of; NE over a list: none of
          uint64_t* tmp = clause_tmp();
          for (size_t i = 1; i < c.nums.size(); ++i) {
            k_.cmp_f64(num, n_, c.op, c.nums[i], tmp);
            if (c.op == Relop::EQ) k_.or_words(out, tmp, nw_);
            else k_.and_words(out, tmp, nw_);
          }
        }
        return;
      case PlanKind::Eq:
        if (p.id) k_.eq_u32(ids, n_, *p.id, out);
        else std::fill(out, out + nw_, 0);
        if (c.op == Relop::NE) kernels::invert(out, n_);
        return;
      case PlanKind::Bits: k_.bits32_u32(ids, n_, p.bits, out); return;
      case PlanKind::Lut: k_.lut_u32(ids, n_, lut_.data(), lut_.size(), out); return;
    }
  }

 public:
  // out &= the clause's mask or the taskers `defined` (words_for(n) words) leaves clear: a charge that
  // binds only where its consumable is defined (ChargeKind::WhereDefined).
  void and_clause_or_undefined(const Clause& c, const uint64_t* defined, uint64_t* out, EligibilityStep* step) {
    uint64_t* tmp = scratch(0);
    clause(c, tmp);
    for (size_t w = 0; w < nw_; ++w) tmp[w] |= ~defined[w];
    if (n_ % 64 != 0) tmp[nw_ - 1] &= (uint64_t{1} << (n_ % 64)) - 1;  // no bits past the last tasker
    k_.and_words(out, tmp, nw_);
    if (step != nullptr) {
      step->pass = k_.popcount(tmp, nw_);
      step->after = k_.popcount(out, nw_);
    }
  }

  // out &= the clause's mask, computed in a scratch buffer of the evaluator (free once eval returned).
  void and_clause(const Clause& c, uint64_t* out, EligibilityStep* step = nullptr) {
    uint64_t* tmp = scratch(0);
    clause(c, tmp);
    k_.and_words(out, tmp, nw_);
    if (step != nullptr) {
      step->pass = k_.popcount(tmp, nw_);
      step->after = k_.popcount(out, nw_);
    }
  }

  // eval() of a whole request, recording each term of its top-level AND (or the whole request) as a
  // step: the term's mask is built anyway, so its counts are two popcounts.
  void eval_steps(const Request& r, uint64_t* out, std::vector<EligibilityStep>& steps) {
    if (r.kind != Request::Kind::And || r.kids.empty()) {
      eval(r, out);
      const uint64_t c = k_.popcount(out, nw_);
      steps.push_back({-1, -1, c, c});
      return;
    }
    eval(r.kids[0], out, 1);
    const uint64_t first = k_.popcount(out, nw_);
    steps.push_back({0, -1, first, first});
    uint64_t* tmp = scratch(0);
    for (size_t i = 1; i < r.kids.size(); ++i) {
      eval(r.kids[i], tmp, 1);
      k_.and_words(out, tmp, nw_);
      steps.push_back({static_cast<int32_t>(i), -1, k_.popcount(tmp, nw_), k_.popcount(out, nw_)});
    }
  }

  // Strict hierarchical matching (seed 002, section 5; Column::holds_at_every_level is the same rule for
  // one row): every level that defines the attribute must match; a level without it defers; a tasker
  // with no level defining it fails the clause.
  void clause(const Clause& c, uint64_t* out) {
    if (memo_ == nullptr) {
      compute_clause(c, out);
      return;
    }
    ClauseMasks::key_of(c, key_);
    if (const std::vector<uint64_t>* mask = memo_->find(key_)) {
      std::copy(mask->begin(), mask->end(), out);
      return;
    }
    compute_clause(c, out);
    memo_->add(key_, out, nw_);
  }

  void compute_clause(const Clause& c, uint64_t* out) {
    const Column& col = t_.columns[c.attr];
    const Plan p = plan(c, col);
    if (!col.multi_level()) {
      if (!col.queue().any()) {  // defined nowhere (its values never allocated: Column's lazy levels)
        std::fill(out, out + nw_, 0);
        return;
      }
      apply(p, c, col.queue().nums().data(), col.queue().ids().data(), out);
      k_.and_words(out, col.queue().present().data(), nw_);
      return;
    }
    if (col.global().present && !value_holds(c, col, col.global().num, col.global().id)) {
      std::fill(out, out + nw_, 0);
      return;
    }
    if (p.kind == PlanKind::Numeric && !col.host_distinct().empty()) {
      // Few distinct host values: decide each once, expand by rank (4 bytes a row, no compare).
      uint32_t bits = 0;
      for (size_t i = 0; i < col.host_distinct().size(); ++i)
        bits |= uint32_t{value_holds(c, col, col.host_distinct()[i], 0)} << i;
      uint64_t* tmp = level_tmp();
      k_.bits32_u32(col.host_rank().data(), n_, bits, tmp);
      k_.or_words(tmp, col.host().absent().data(), nw_);
      if (col.queue().any()) {
        apply(p, c, col.queue().nums().data(), col.queue().ids().data(), out);
        k_.or_words(out, col.queue().absent().data(), nw_);
        k_.and_words(out, tmp, nw_);
      } else {
        std::copy(tmp, tmp + nw_, out);
      }
      if (!col.global().present) k_.and_words(out, col.defined().data(), nw_);
      return;
    }
    if (p.kind == PlanKind::Numeric && c.nums.size() == 1 && col.host().any() && col.queue().any()) {
      // queue and host levels in one pass
      k_.cmp2_f64(col.queue().nums().data(), col.queue().absent().data(), col.host().nums().data(),
                  col.host().absent().data(), n_, c.op, c.nums[0], out);
      if (!col.global().present) k_.and_words(out, col.defined().data(), nw_);  // with a global value all are defined
      return;
    }
    if (col.queue().any()) {
      apply(p, c, col.queue().nums().data(), col.queue().ids().data(), out);
      k_.or_words(out, col.queue().absent().data(), nw_);
    } else {
      kernels::fill_ones(out, n_);  // no queue-level values: that level defers everywhere
    }
    if (col.host().any()) {
      uint64_t* tmp = level_tmp();
      apply(p, c, col.host().nums().data(), col.host().ids().data(), tmp);
      k_.or_words(tmp, col.host().absent().data(), nw_);
      k_.and_words(out, tmp, nw_);
    }
    if (!col.global().present) k_.and_words(out, col.defined().data(), nw_);
  }

 private:
  const TaskerTable& t_;
  const kernels::KernelTable& k_;
  size_t n_, nw_;
  std::vector<std::vector<uint64_t>> bufs_;
  std::vector<uint64_t> clause_buf_, level_buf_;
  std::vector<uint32_t> lut_;
  ClauseMasks* memo_;
  std::string key_;
};

bool Evaluator::value_holds(const Clause& c, const Column& col, double num, uint32_t id) {
  bool any = false, all = true;
  auto note = [&](bool ok) {
    any = any || ok;
    all = all && ok;
  };
  if (is_numeric(col.type)) {
    for (double v : c.nums) note(colmatch::apply(c.op, num, v));
  } else {
    const std::string& text = col.dict.value(id);
    for (const auto& s : c.strs) {
      const WildcardPattern pat(col.type == AttrType::ReString && !c.expression ? s : std::string_view{});
      std::optional<WildcardExpression> ex;
      if (c.expression) ex.emplace(s);
      auto equal = [&](std::string_view e) {
        return ex ? ex->matches(e) : col.type == AttrType::ReString ? pat.matches(e) : e == s;
      };
      bool eq = false;
      if (col.multi) {
        for (std::string_view e : set_elements(text)) eq = eq || equal(e);
      } else {
        eq = equal(text);
      }
      note(c.op == Relop::EQ ? eq : !eq);
    }
  }
  return c.op == Relop::NE ? all : any;  // == over a list: any of; != over a list: none of
}

// One row against a request, by the same rules as the kernels (one value at a time, no plans).
bool row_holds(const TaskerTable& t, const Request& r, uint32_t row) {
  switch (r.kind) {
    case Request::Kind::Clause: {
      const Column& col = t.columns[r.clause.attr];
      return col.holds_at_every_level(
          row, [&](double num, uint32_t id) { return Evaluator::value_holds(r.clause, col, num, id); });
    }
    case Request::Kind::Not: return !row_holds(t, r.kids[0], row);
    case Request::Kind::And:
      for (const auto& k : r.kids)
        if (!row_holds(t, k, row)) return false;
      return true;
    case Request::Kind::Or:
      for (const auto& k : r.kids)
        if (row_holds(t, k, row)) return true;
      return false;
  }
  return false;
}

// Consumable capacity >= need, as the clause `attribute >= need` (strict hierarchy included).
Clause capacity_clause(uint32_t attr, double need) {
  Clause c;
  c.attr = attr;
  c.op = Relop::GE;
  c.nums.push_back(need);
  return c;
}

}  // namespace

std::vector<uint32_t> unrequested_forced(const Catalog& catalog, const Request& request, const ChargeVector& need) {
  std::vector<uint32_t> out;
  if (catalog.reading != GridEngineReading::SoGE819) return out;
  std::optional<std::vector<uint32_t>> named;  // the request's attributes, once a forced one needs them
  for (uint32_t a = 0; a < catalog.size(); ++a) {
    if (catalog.at(a).requestable != Requestable::Forced) continue;
    const int slot = catalog.consumable_slot(a);
    if (slot >= 0) {
      if (!(need[static_cast<size_t>(slot)] > 0)) out.push_back(a);
      continue;
    }
    if (!named) named = mentioned_attributes(request);
    if (!std::binary_search(named->begin(), named->end(), a)) out.push_back(a);
  }
  return out;
}

std::vector<LevelCount> step_level_counts(const Catalog& catalog, const TaskerTable& taskers, const Request& request,
                                          const ChargeVector& need, const EligibilityStep& step) {
  Clause capacity;
  const Clause* clause = nullptr;
  if (step.consumable >= 0) {
    const size_t k = static_cast<size_t>(step.consumable);
    capacity = capacity_clause(catalog.consumables()[k], need[k]);
    clause = &capacity;
  } else {
    const Request& term = step.term < 0 ? request : request.kids[static_cast<size_t>(step.term)];
    if (term.kind == Request::Kind::Clause) clause = &term.clause;
  }
  if (clause == nullptr) return {};
  const Column& col = taskers.columns[clause->attr];
  if (!col.multi_level()) return {};
  auto holds = [&](double num, uint32_t id) { return Evaluator::value_holds(*clause, col, num, id); };
  const uint64_t n = taskers.size();
  std::vector<LevelCount> out;
  if (col.global().present) out.push_back({"global", n, holds(col.global().num, col.global().id) ? n : 0});
  LevelCount host{"host"}, queue{"queue"};
  for (uint32_t t = 0; t < n; ++t) {
    if (col.host().has(t)) {
      ++host.defined;
      host.pass += holds(col.host().num(t), col.host().id(t)) ? 1 : 0;
    }
    if (col.queue().has(t)) {
      ++queue.defined;
      queue.pass += holds(col.queue().num(t), col.queue().id(t)) ? 1 : 0;
    }
  }
  out.push_back(host);
  out.push_back(queue);
  return out;
}

namespace {

// Calls fn(k, kind) for each consumable k a category's charge binds, by increasing k: those with
// need[k] > 0 and, under Son of Grid Engine 8.1.9, those requested as 0 (ChargeKind::DefinedOnly).
// O(nonzero) when `kinds` is empty (all Everywhere: every Accelerator category), O(consumables) else.
template <typename Fn>
void each_charge_step(size_t consumables, const ChargeVector& need, const std::vector<ChargeKind>* kinds, Fn&& fn) {
  if (kinds == nullptr || kinds->empty()) {
    for (const ChargeVector::Entry& e : need.nonzero())
      if (e.amount > 0) fn(e.k, ChargeKind::Everywhere);
    return;
  }
  for (uint32_t i = 0; i < consumables; ++i) {
    const ChargeKind kind = (*kinds)[i];
    if (!(need[i] > 0) && kind != ChargeKind::DefinedOnly) continue;
    fn(i, kind);
  }
}

void eligible_words_with(const Catalog& catalog, const TaskerTable& taskers, const Request& request,
                         const ChargeVector& need, const kernels::KernelTable& k, uint64_t* out,
                         std::vector<EligibilityStep>* steps, const std::vector<ChargeKind>* kinds, ClauseMasks* memo) {
  Evaluator ev(taskers, k, memo);
  if (steps != nullptr) ev.eval_steps(request, out, *steps);
  else ev.eval(request, out);
  const auto& cons = catalog.consumables();
  const size_t nw = kernels::words_for(taskers.size());
  each_charge_step(cons.size(), need, kinds, [&](uint32_t i, ChargeKind kind) {
    EligibilityStep* step = nullptr;
    if (steps != nullptr) {
      steps->push_back({-1, static_cast<int32_t>(i), 0, 0, -1, kind});
      step = &steps->back();
    }
    const Column& col = taskers.columns[cons[i]];
    if (kind == ChargeKind::Everywhere || col.global().present) {  // a global value defines it everywhere
      ev.and_clause(capacity_clause(cons[i], kind == ChargeKind::DefinedOnly ? -HUGE_VAL : need[i]), out, step);
      return;
    }
    if (kind == ChargeKind::WhereDefined) {  // room where the consumable is defined, or not defined at all
      ev.and_clause_or_undefined(capacity_clause(cons[i], need[i]), col.defined().data(), out, step);
      return;
    }
    k.and_words(out, col.defined().data(), nw);  // DefinedOnly: defined on some level
    if (step != nullptr) {
      step->pass = k.popcount(col.defined().data(), nw);
      step->after = k.popcount(out, nw);
    }
  });
  for (uint32_t a : unrequested_forced(catalog, request, need)) {  // off the taskers that define it
    const Column& col = taskers.columns[a];
    uint64_t pass = taskers.size();
    if (col.global().present) {
      std::fill(out, out + nw, 0);
      pass = 0;
    } else {
      k.andnot_words(out, col.defined().data(), nw);
      pass -= k.popcount(col.defined().data(), nw);
    }
    if (steps != nullptr) steps->push_back({-1, -1, pass, k.popcount(out, nw), static_cast<int32_t>(a)});
  }
}

CategoryEligibility evaluate_category_with(const Catalog& catalog, const TaskerTable& taskers, const Request& request,
                                           const Request* soft, const ChargeVector& need, const kernels::KernelTable& k,
                                           const std::vector<ChargeKind>* kinds, ClauseMasks* memo) {
  CategoryEligibility e;
  const size_t n = taskers.size(), nw = kernels::words_for(n);
  std::vector<uint64_t> words(nw);
  eligible_words_with(catalog, taskers, request, need, k, words.data(), &e.steps, kinds, memo);
  const uint64_t count = k.popcount(words.data(), nw);
  if (soft != nullptr && count > 0) e.tiers = soft_tiers(taskers, *soft, words.data(), k);
  e.eligible = kernels::TaskerSet::from_words(std::move(words), n, count);
  return e;
}

}  // namespace

void eligible_words(const Catalog& catalog, const TaskerTable& taskers, const Request& request,
                    const ChargeVector& need, const kernels::KernelTable& k, uint64_t* out,
                    std::vector<EligibilityStep>* steps, const std::vector<ChargeKind>* kinds) {
  eligible_words_with(catalog, taskers, request, need, k, out, steps, kinds, nullptr);
}

bool tasker_eligible(const Catalog& catalog, const TaskerTable& taskers, const Request& request,
                     const ChargeVector& need, uint32_t t, const std::vector<ChargeKind>* kinds) {
  if (!row_holds(taskers, request, t)) return false;
  for (uint32_t a : unrequested_forced(catalog, request, need))
    if (taskers.columns[a].is_defined(t)) return false;
  const auto& cons = catalog.consumables();
  bool ok = true;
  each_charge_step(cons.size(), need, kinds, [&](uint32_t i, ChargeKind kind) {
    const double n = kind == ChargeKind::DefinedOnly ? -HUGE_VAL : need[i];
    const Column& col = taskers.columns[cons[i]];
    // capacity >= need on every level that defines the pool, as capacity_clause; a default charge
    // passes a tasker that defines the consumable nowhere
    if (!ok || (kind == ChargeKind::WhereDefined && !col.is_defined(t))) return;
    ok = col.holds_at_every_level(t, [n](double num, uint32_t) { return num >= n; });
  });
  return ok;
}

size_t soft_violations(const TaskerTable& taskers, const Request& soft, uint32_t t) {
  size_t v = 0;
  for (const Request* term : soft_terms(soft)) v += row_holds(taskers, *term, t) ? 0 : 1;
  return v;
}

std::vector<kernels::TaskerSet> soft_tiers(const TaskerTable& taskers, const Request& soft, const uint64_t* eligible,
                                           const kernels::KernelTable& k) {
  const size_t n = taskers.size(), nw = kernels::words_for(n);
  const auto terms = soft_terms(soft);
  Evaluator ev(taskers, k);
  std::vector<uint64_t> planes[4], m(nw);
  for (auto& p : planes) p.assign(nw, 0);
  for (const Request* term : terms) {
    ev.eval(*term, m.data());
    for (size_t w = 0; w < nw; ++w) {  // add one violation where the term fails: a ripple-carry adder
      uint64_t carry = ~m[w] & eligible[w];
      for (auto& p : planes) {
        const uint64_t sum = p[w] ^ carry;
        carry &= p[w];
        p[w] = sum;
      }
    }
  }
  std::vector<kernels::TaskerSet> out;
  for (size_t v = 0; v <= terms.size(); ++v) {
    std::vector<uint64_t> tier(eligible, eligible + nw);
    for (size_t b = 0; b < 4; ++b) {
      if ((v >> b) & 1) k.and_words(tier.data(), planes[b].data(), nw);
      else k.andnot_words(tier.data(), planes[b].data(), nw);
    }
    const uint64_t count = k.popcount(tier.data(), nw);
    out.push_back(kernels::TaskerSet::from_words(std::move(tier), n, count));
  }
  return out;
}

CategoryEligibility evaluate_category(const Catalog& catalog, const TaskerTable& taskers, const Request& request,
                                      const Request* soft, const ChargeVector& need, const kernels::KernelTable& k,
                                      const std::vector<ChargeKind>* kinds) {
  return evaluate_category_with(catalog, taskers, request, soft, need, k, kinds, nullptr);
}

void refresh_tasker(const Catalog& catalog, const TaskerTable& taskers, const Request& request, const Request* soft,
                    const ChargeVector& need, uint32_t t, CategoryEligibility& e,
                    const std::vector<ChargeKind>* kinds) {
  const bool ok = tasker_eligible(catalog, taskers, request, need, t, kinds);
  if (ok) e.eligible.add(t);
  else e.eligible.remove(t);
  if (soft == nullptr) return;
  for (auto& tier : e.tiers) tier.remove(t);
  if (!ok) return;
  if (e.tiers.empty()) {  // evaluated while nothing was eligible: the tiers start empty now
    const size_t n = taskers.size();
    e.tiers.resize(soft_terms(*soft).size() + 1);
    for (auto& tier : e.tiers)
      tier = kernels::TaskerSet::from_words(std::vector<uint64_t>(kernels::words_for(n)), n, 0);
  }
  e.tiers[soft_violations(taskers, *soft, t)].add(t);
}

void require_master_fit(const Catalog& catalog, const TaskerTable& taskers, const Request& request,
                        const Categories& cats, uint32_t c, CategoryEligibility& e) {
  if (!spreads(cats.rule[c]) || e.eligible.count() == 0) return;
  if (cats.rule[c] == AllocationRule::OnePerTasker && e.eligible.count() < cats.fewest_taskers(c)) {
    // fewer eligible taskers than its fewest slots, one each: never runs (Slurm: "Requested node configuration is
    // not available")
    const size_t n = taskers.size();
    e.eligible = kernels::TaskerSet::from_words(std::vector<uint64_t>(kernels::words_for(n)), n, 0);
    e.tiers.clear();
    return;
  }
  const ChargeVector& once = cats.master_charge[c];
  if (!once.any_positive()) return;
  const ChargeVector need = cats.unit_charge[c].plus(once);
  const std::vector<ChargeKind>* kinds = &cats.charge_kind[c];
  for (size_t t = e.eligible.next(0); t < e.eligible.universe(); t = e.eligible.next(t + 1))
    if (tasker_eligible(catalog, taskers, request, need, static_cast<uint32_t>(t), kinds)) return;
  const size_t n = taskers.size();
  e.eligible = kernels::TaskerSet::from_words(std::vector<uint64_t>(kernels::words_for(n)), n, 0);
  e.tiers.clear();
}

std::vector<CategoryEligibility> compute_eligibility(const Catalog& catalog, const TaskerTable& taskers,
                                                     const JobTable& jobs, const Categories& cats,
                                                     const kernels::KernelTable& k) {
  std::vector<CategoryEligibility> out(cats.size());
  // Grain 4: one category costs (clauses x taskers / 64) word operations, a few microseconds for
  // 10k taskers. Grains 1 to 64 measured within noise of each other (3.1-3.5 ms for 944 categories
  // x 10k taskers, BENCHMARKS.md); a small grain keeps both cores busy when categories are few.
  // Each thread keeps the clause masks it computed for the categories it evaluates next.
  tbb::enumerable_thread_specific<ClauseMasks> memos;
  tbb::parallel_for(tbb::blocked_range<size_t>(0, cats.size(), 4), [&](const tbb::blocked_range<size_t>& r) {
    ClauseMasks& memo = memos.local();
    for (size_t c = r.begin(); c != r.end(); ++c)
      out[c] = evaluate_category_with(catalog, taskers, jobs.requests[cats.request[c]],
                                      cats.soft[c] != 0 ? &jobs.requests[cats.soft[c]] : nullptr, cats.unit_charge[c],
                                      k, &cats.charge_kind[c], &memo);
    for (size_t c = r.begin(); c != r.end(); ++c)
      require_master_fit(catalog, taskers, jobs.requests[cats.request[c]], cats, static_cast<uint32_t>(c), out[c]);
  });
  // (a solution never chooses itself: categories that choose read only ones that do not)
  tbb::parallel_for(tbb::blocked_range<uint32_t>(0, static_cast<uint32_t>(cats.solutions.size()), 64),
                    [&](const tbb::blocked_range<uint32_t>& r) {
                      for (uint32_t c = r.begin(); c != r.end(); ++c) unite_solutions(cats, c, out);
                    });
  return out;
}

void unite_solutions(const Categories& cats, uint32_t c, std::vector<CategoryEligibility>& eligible) {
  if (!cats.chooses(c)) return;
  const size_t universe = eligible[c].eligible.universe();
  std::vector<uint64_t> words((universe + 63) / 64, 0);
  for (const uint32_t s : cats.solutions[c]) eligible[s].eligible.or_into(words);
  uint64_t count = 0;
  for (const uint64_t w : words) count += static_cast<uint64_t>(__builtin_popcountll(w));
  eligible[c].eligible = kernels::TaskerSet::from_words(std::move(words), universe, count);
}

}  // namespace colmatch
