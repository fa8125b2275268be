#include "engine/eligibility.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "engine/wildcard.hpp"

namespace colmatch {
namespace {

class Evaluator {
 public:
  Evaluator(const TaskerTable& t, const kernels::KernelTable& k)
      : t_(t), k_(k), n_(t.size()), nw_(kernels::words_for(t.size())) {}

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

  void capacity(const Column& c, double need, uint64_t* out) {
    uint64_t* tmp = scratch(kCapacityDepth);
    k_.cmp_f64(c.num.data(), n_, Relop::GE, need, tmp);
    k_.and_words(out, tmp, nw_);
    k_.and_words(out, c.present.data(), nw_);
  }

 private:
  static constexpr size_t kCapacityDepth = 0;

  uint64_t* scratch(size_t depth) {
    // depth d uses slot d + 1 for clause temporaries; slots are reused across siblings.
    while (bufs_.size() <= depth + 1) bufs_.emplace_back(nw_);
    return bufs_[depth].data();
  }
  uint64_t* clause_tmp() {
    if (clause_buf_.size() != nw_) clause_buf_.assign(nw_, 0);
    return clause_buf_.data();
  }

  void clause(const Clause& c, uint64_t* out) {
    const Column& col = t_.columns[c.attr];
    if (is_numeric(col.type)) {
      k_.cmp_f64(col.num.data(), n_, c.op, c.nums[0], out);
      if (c.nums.size() > 1) {
        // EQ over a list: any of; NE over a list: none of.
        uint64_t* tmp = clause_tmp();
        for (size_t i = 1; i < c.nums.size(); ++i) {
          k_.cmp_f64(col.num.data(), n_, c.op, c.nums[i], tmp);
          if (c.op == Relop::EQ) k_.or_words(out, tmp, nw_);
          else k_.and_words(out, tmp, nw_);
        }
      }
    } else if (col.type != AttrType::ReString && c.strs.size() == 1) {
      // One plain value: a dictionary lookup, then id equality over the column.
      const auto id = col.dict.find(c.strs[0]);
      if (id) {
        k_.eq_u32(col.ids.data(), n_, *id, out);
      } else {
        std::fill(out, out + nw_, 0);
      }
      if (c.op == Relop::NE) kernels::invert(out, n_);
    } else {
      // Patterns or lists: decide once per distinct dictionary value, then expand with the LUT kernel.
      const size_t d = col.dict.size();
      lut_.assign(d == 0 ? 1 : d, 0);
      if (col.type == AttrType::ReString) {
        for (const auto& s : c.strs) {
          const WildcardPattern p(s);
          for (uint32_t v = 0; v < d; ++v)
            if (!lut_[v] && p.matches(col.dict.value(v))) lut_[v] = 0xFFFFFFFFu;
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
        uint32_t bits = 0;
        for (uint32_t v = 0; v < d; ++v) bits |= (lut_[v] & 1u) << v;
        k_.bits32_u32(col.ids.data(), n_, bits, out);
      } else {
        k_.lut_u32(col.ids.data(), n_, lut_.data(), lut_.size(), out);
      }
    }
    k_.and_words(out, col.present.data(), nw_);  // a tasker without the attribute fails the clause
  }

  const TaskerTable& t_;
  const kernels::KernelTable& k_;
  size_t n_, nw_;
  std::vector<std::vector<uint64_t>> bufs_;
  std::vector<uint64_t> clause_buf_;
  std::vector<uint32_t> lut_;
};

}  // namespace

void eligible_words(const Catalog& catalog, const TaskerTable& taskers, const Request& request,
                    const std::vector<double>& need, const kernels::KernelTable& k, uint64_t* out) {
  Evaluator ev(taskers, k);
  ev.eval(request, out);
  const auto& cons = catalog.consumables();
  for (size_t i = 0; i < cons.size(); ++i)
    if (need[i] > 0) ev.capacity(taskers.columns[cons[i]], need[i], out);
}

std::vector<kernels::TaskerSet> compute_eligibility(const Catalog& catalog, const TaskerTable& taskers,
                                                    const JobTable& jobs, const Categories& cats,
                                                    const kernels::KernelTable& k) {
  std::vector<kernels::TaskerSet> sets(cats.size());
  const size_t nw = kernels::words_for(taskers.size());
  // Grain 4: one category costs (clauses x taskers / 64) word operations, a few microseconds for
  // 10k taskers. Grains 1 to 64 measured within noise of each other (3.1-3.5 ms for 944 categories
  // x 10k taskers, BENCHMARKS.md); a small grain keeps both cores busy when categories are few.
  tbb::parallel_for(tbb::blocked_range<size_t>(0, cats.size(), 4), [&](const tbb::blocked_range<size_t>& r) {
    for (size_t c = r.begin(); c != r.end(); ++c) {
      std::vector<uint64_t> words(nw);
      eligible_words(catalog, taskers, jobs.requests[cats.request[c]], cats.need[c], k, words.data());
      const uint64_t count = k.popcount(words.data(), nw);
      sets[c] = kernels::TaskerSet::from_words(std::move(words), taskers.size(), count);
    }
  });
  return sets;
}

}  // namespace colmatch
