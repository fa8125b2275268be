#include "engine/model/capacity.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace colmatch {

Capacity Capacity::configured(const Catalog& catalog, const TaskerTable& taskers) {
  Capacity c;
  c.taskers_ = &taskers;
  const auto& cons = catalog.consumables();
  c.columns_.resize(cons.size());
  c.queue_.resize(cons.size());
  c.host_.resize(cons.size());
  c.global_.resize(cons.size());
  const size_t nblocks = kernels::words_for(taskers.size());
  c.block_max_.resize(cons.size());
  c.room_.resize(cons.size());
  for (size_t k = 0; k < cons.size(); ++k) {
    const Column& col = taskers.columns[cons[k]];
    c.columns_[k] = &col;
    // a tasker-level pool per tasker where some tasker has one, or where there is no other level (a
    // consumable no level defines stays empty: a farm-wide licence costs nothing per tasker)
    if (!col.multi_level() || col.queue().any()) {
      c.queue_[k] = col.queue().nums();
      c.queue_[k].resize(taskers.size(), 0.0);  // a level without values has none allocated
      c.block_max_[k].assign(nblocks, 0.0);
      c.room_[k].assign(nblocks, 0);
    }
    c.host_[k] = col.by_host().nums();
    // Son of Grid Engine 8.1.9 charges a consumable's default only where the consumable is defined
    // (ChargeKind::WhereDefined): a tasker that defines it on no level has no pool to limit it, an
    // unbounded one here. Only requests that eligibility lets through reach it (a requested amount
    // needs the consumable defined), so it takes only default charges, which change nothing.
    const AttributeDef& d = catalog.at(cons[k]);
    if (catalog.reading == GridEngineReading::SoGE819 && d.default_amount.value_or(0.0) > 0 && !col.global().present &&
        !c.queue_[k].empty())
      for (uint32_t t = 0; t < taskers.size(); ++t)
        if (!col.is_defined(t)) c.queue_[k][t] = std::numeric_limits<double>::infinity();
    c.global_[k] = col.global().present ? col.global().num : std::numeric_limits<double>::quiet_NaN();
  }
  c.own_.total.assign(cons.size(), 0.0);
  c.settle();  // the block maxima and the queue totals
  for (const double total : c.own_.total) c.slack_.push_back(std::max(1e-9, 1e-9 * std::fabs(total)));
  return c;
}

std::vector<Charge> Capacity::charges(const ChargeVector& need) const {
  std::vector<Charge> out;
  for (const ChargeVector::Entry& e : need.nonzero())
    if (e.amount > 0) out.push_back({e.k, e.amount, !columns_[e.k]->multi_level()});
  return out;
}

void Capacity::refresh_block(size_t k, size_t b) {
  const std::vector<double>& f = queue_[k];
  const size_t end = std::min(f.size(), (b + 1) * 64);
  double m = f[b * 64];
  size_t t = b * 64 + 1;
  if (end - t >= 63) {  // a whole block: four independent maxima (the same maximum: none is NaN)
    double m1 = f[t], m2 = f[t + 1], m3 = f[t + 2];
    for (t += 3; t + 4 <= end; t += 4) {
      m = std::max(m, f[t]);
      m1 = std::max(m1, f[t + 1]);
      m2 = std::max(m2, f[t + 2]);
      m3 = std::max(m3, f[t + 3]);
    }
    m = std::max(std::max(m, m1), std::max(m2, m3));
  }
  for (; t < end; ++t) m = std::max(m, f[t]);
  block_max_[k][b] = m;
}

double Capacity::available(size_t k, uint32_t t) const noexcept {
  const Column& col = *columns_[k];
  double a = std::numeric_limits<double>::quiet_NaN();
  auto low = [&](double v) { a = std::isnan(a) ? v : std::min(a, v); };
  if (col.has(t)) low(queue_[k][t]);
  const uint32_t h = taskers_->host_of[t];
  if (h != kNone && col.by_host().has(h)) low(host_[k][h]);
  if (col.global().present) low(global_[k]);
  return a;
}

// Adds delta to every pool above tasker t (a queue-only consumable: the tasker's own pool, always).
void Capacity::add(Ledger& ledger, size_t k, uint32_t t, double delta) {
  const Column& col = *columns_[k];
  auto change = [&](double& v) {
    if (ledger.recording) ledger.undo.emplace_back(&v, v);
    v += delta;
  };
  const bool queue_only = !col.multi_level();
  if (queue_only || col.has(t)) {
    const double before = queue_[k][t];
    change(queue_[k][t]);
    ledger.total[k] += delta;
    if (ledger.lane) return;  // the block may hold other writers' taskers: its maximum stays a bound
    // The block maximum in O(1) unless the tasker holding it went down: then the block is scanned.
    double& m = block_max_[k][t >> 6];
    if (delta >= 0) m = std::max(m, queue_[k][t]);
    else if (before >= m) refresh_block(k, t >> 6);
    refresh_room(k, t);
    if (ledger.recording) ledger.touched.emplace_back(k, t);
  }
  if (queue_only) return;
  const uint32_t h = taskers_->host_of[t];
  if (h != kNone && col.by_host().has(h)) change(host_[k][h]);
  if (col.global().present) change(global_[k]);
}

void Capacity::take(size_t k, uint32_t t, double amount) { add(k, t, -amount); }

void Capacity::take(const InUse& in_use) {
  if (in_use.amount.size() != queue_.size()) throw std::invalid_argument("InUse: one vector per consumable");
  for (size_t k = 0; k < in_use.amount.size(); ++k) {
    if (in_use.amount[k].empty()) continue;
    if (in_use.amount[k].size() != taskers_->size()) throw std::invalid_argument("InUse: one amount per tasker");
    for (uint32_t t = 0; t < in_use.amount[k].size(); ++t)
      if (in_use.amount[k][t] != 0) take(k, t, in_use.amount[k][t]);
  }
}

void Capacity::take(std::span<const Charge> charges, uint32_t t) {
  for (const Charge& x : charges) add(x.k, t, -x.amount);
}

void Capacity::release(size_t k, uint32_t t, double amount) {
  add(k, t, repay(k, t, amount));
  ++epoch_;
}

void Capacity::release(std::span<const Charge> charges, uint32_t t) {
  for (const Charge& x : charges) add(x.k, t, repay(x.k, t, x.amount));
  ++epoch_;
}

double Capacity::repay(size_t k, uint32_t t, double amount) {
  if (debt_.empty() || debt_[k].empty() || !(debt_[k][t] > 0)) return amount;
  const double paid = std::min(debt_[k][t], amount);
  debt_[k][t] -= paid;
  return amount - paid;
}

void Capacity::set_down(uint32_t t, bool down) {
  if (down_.empty()) {
    if (!down) return;
    down_.assign(taskers_->size(), 0);
  }
  if (down_[t] && !down) ++epoch_;  // capacity came back
  down_[t] = down ? 1 : 0;
}

bool Capacity::set_queue_free(size_t k, uint32_t t, double amount) {
  if (columns_[k]->multi_level())
    throw std::invalid_argument("Capacity::set_queue_free: the consumable has a host or global pool");
  const double before = queue_[k][t];
  if (amount == before) return false;
  add(k, t, amount - before);
  queue_[k][t] = amount;  // exactly: before + (amount - before) may round
  refresh_block(k, t >> 6);
  refresh_room(k, t);
  if (amount > before) ++epoch_;
  return amount > before;
}

bool Capacity::set_configured(size_t k, uint32_t t, double amount) {
  if (columns_[k]->multi_level())
    throw std::invalid_argument("Capacity::set_configured: the consumable has a host or global pool");
  if (configured_.empty()) configured_.resize(queue_.size());
  if (configured_[k].empty()) {
    configured_[k] = columns_[k]->queue().nums();
    configured_[k].resize(taskers_->size(), 0.0);
  }
  const double delta = amount - configured_[k][t];
  configured_[k][t] = amount;
  if (delta >= 0) {
    const double grow = repay(k, t, delta);
    if (grow > 0) {
      add(k, t, grow);
      ++epoch_;
    }
    return delta > 0;
  }
  const double cut = std::min(std::max(queue_[k][t], 0.0), -delta);
  add(k, t, -cut);
  if (cut < -delta) {
    if (debt_.empty()) debt_.resize(queue_.size());
    if (debt_[k].empty()) debt_[k].assign(queue_[k].size(), 0.0);
    debt_[k][t] += -delta - cut;
  }
  return false;
}

void Capacity::begin(Ledger& ledger) {
  ledger.saved_total = ledger.total;
  ledger.recording = true;
  ledger.undo.clear();
  ledger.touched.clear();
}

void Capacity::rollback(Ledger& ledger) {
  for (auto it = ledger.undo.rbegin(); it != ledger.undo.rend(); ++it) *it->first = it->second;
  ledger.total = ledger.saved_total;
  // restored values are the ones before the tentative takes: the maxima can only go back up to them
  for (const auto& [k, t] : ledger.touched) {
    block_max_[k][t >> 6] = std::max(block_max_[k][t >> 6], queue_[k][t]);
    refresh_room(k, t);
  }
  commit(ledger);
}

void Capacity::commit(Ledger& ledger) {
  ledger.recording = false;
  ledger.undo.clear();
  ledger.touched.clear();
}

Capacity::Ledger Capacity::lane() const {
  Ledger l;
  l.lane = true;
  l.total = own_.total;
  return l;
}

void Capacity::settle() {
  for (size_t k = 0; k < queue_.size(); ++k) {
    for (size_t b = 0; b < block_max_[k].size(); ++b) refresh_block(k, b);
    for (size_t t = 0; t < room_[k].size() * 64 && t < queue_[k].size(); ++t) refresh_room(k, t);
    double total = 0;
    for (double v : queue_[k]) total += v;
    own_.total[k] = total;
  }
}

}  // namespace colmatch
