#include "loaders/slurm_tres.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace colmatch::loaders::slurm {
namespace {

// The columns: cpu, mem (MB), node, billing, then each GRES a node has.
constexpr size_t kCpu = 0, kMem = 1, kNode = 2, kBilling = 3;

// TRESBillingWeights resolved to columns: (column, weight, a node TRES), a TRES of no column left out (no job
// or partition counts any of it).
struct Weight {
  size_t column;
  double weight;
  bool per_node;
};

std::vector<Weight> resolve(const std::vector<std::pair<std::string, double>>& weights,
                            const std::vector<std::string>& names) {
  std::vector<Weight> out;
  for (const auto& [name, w] : weights) {
    const auto it = std::find(names.begin(), names.end(), name);
    const auto k = static_cast<size_t>(it - names.begin());
    if (it == names.end() || k == kBilling) continue;
    out.push_back({k, w, k == kCpu || k == kMem || k == kNode || name.rfind("gres/", 0) == 0});
  }
  return out;
}

// assoc_mgr_tres_weighted: the billing TRES, each count by its TRESBillingWeights weight, summed (no
// weights: the CPUs), truncated as it is stored in a uint64 unless `whole` is false; with PriorityFlags=MAX_TRES
// the largest of the node TRES (cpu, mem, node, GRES) plus the sum of the others.
double billing(const std::vector<double>& counts, bool weighted, const std::vector<Weight>& weights, bool max_tres,
               bool whole = true) {
  if (!weighted) return std::floor(counts[kCpu]);
  double sum = 0, node = 0;
  for (const Weight& w : weights) {
    if (max_tres && w.per_node) node = std::max(node, w.weight * counts[w.column]);
    else sum += w.weight * counts[w.column];
  }
  return whole ? std::floor(node + sum) : node + sum;
}

}  // namespace

void tres_factors(const Cluster& cluster, const std::vector<TresAsked>& asked, SlurmMultifactor& mf) {
  std::set<std::string> gres;
  for (const Node& n : cluster.every_node)
    for (const auto& [name, count] : n.gres) gres.insert(name);
  std::vector<std::string> names = {"cpu", "mem", "node", "billing"};
  names.insert(names.end(), gres.begin(), gres.end());
  const size_t width = names.size();
  auto column = [&](const std::string& name) {
    return static_cast<size_t>(std::find(names.begin(), names.end(), name) - names.begin());
  };
  // _calc_part_tres: the partition's nodes (any state) summed, its node count, its billing
  struct Totals {
    std::vector<double> counts;
    double first_mem = 0;  // _mem_per_node_part: its first node's RealMemory
    std::vector<Weight> weights;
  };
  std::map<const Partition*, Totals> total;
  for (const Partition& p : cluster.partitions) {
    Totals& t = total[&p];
    t.counts.assign(width, 0.0);
    t.weights = resolve(p.billing_weights, names);
    bool first = true;
    for (const Node& n : cluster.every_node) {
      if (std::find(n.partitions.begin(), n.partitions.end(), p.name) == n.partitions.end()) continue;
      if (first) t.first_mem = n.mem;
      first = false;
      t.counts[kCpu] += n.cpus;
      t.counts[kMem] += n.mem;
      t.counts[kNode] += 1;
      for (const auto& [name, count] : n.gres) t.counts[column(name)] += count;
    }
    t.counts[kBilling] = billing(t.counts, !p.billing_weights.empty(), t.weights, mf.max_tres);
  }
  mf.tres_names = names;
  mf.tres_factor.assign(asked.size() * width, 0.0);
  mf.billable.clear();
  mf.whole_node_billing.clear();
  std::vector<double> job(width);
  for (size_t j = 0; j < asked.size(); ++j) {
    const TresAsked& a = asked[j];
    if (a.partition == nullptr) continue;
    const Totals& part = total.at(a.partition);
    std::fill(job.begin(), job.end(), 0.0);
    for (const auto& [name, count] : a.gres)
      if (const size_t k = column(name); k < width) job[k] = count;
    job[kCpu] = a.cpu;
    job[kNode] = a.node;
    job[kMem] = std::floor(std::isnan(a.mem) ? part.first_mem * a.node : a.mem);
    const bool weighted = !a.partition->billing_weights.empty();
    job[kBilling] = billing(job, weighted, part.weights, mf.max_tres);
    // calc_job_billable_tres, from what it is given (its request: the same but for a node taken whole)
    if (weighted) {
      mf.billable.resize(asked.size(), 0.0);
      mf.billable[j] = billing(job, weighted, part.weights, mf.max_tres, false);
    }
    // a job given its nodes whole is billed for what it is given (its CPUs and, asked none, memory: every
    // one of its nodes'): its weights and the rest of its TRES, weighed, for the engine
    if (weighted && a.whole_node) {
      SlurmWholeNodeBilling b;
      b.given = true;
      b.max_tres = mf.max_tres;
      b.mem_per_node = a.mem_per_node;
      b.mem_per_cpu = a.mem_per_cpu;
      for (const Weight& w : part.weights) {
        if (w.column == kCpu) b.cpu_weight += w.weight;
        else if (w.column == kMem) b.mem_weight += w.weight;
        else if (mf.max_tres && w.per_node) b.others_max = std::max(b.others_max, w.weight * job[w.column]);
        else b.others += w.weight * job[w.column];
      }
      mf.whole_node_billing.resize(asked.size());
      mf.whole_node_billing[j] = b;
    }
    for (size_t k = 0; k < width; ++k)  // (NO_NORMAL_TRES: the count as it is)
      if (mf.no_normal_tres) mf.tres_factor[j * width + k] = job[k];
      else if (job[k] > 0 && part.counts[k] > 0) mf.tres_factor[j * width + k] = job[k] / part.counts[k];
  }
}

}  // namespace colmatch::loaders::slurm
