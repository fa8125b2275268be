#include "loaders/slurm_tres.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

namespace colmatch::loaders::slurm {
namespace {

// A TRES count vector by name: cpu, mem (MB), node, gres/...
using Counts = std::map<std::string, double>;

// assoc_mgr_tres_weighted: the billing TRES, each count by its TRESBillingWeights weight, summed (no
// weights: the CPUs), truncated as it is stored in a uint64 unless `whole` is false; with PriorityFlags=MAX_TRES
// the largest of the node TRES (cpu, mem, node, GRES) plus the sum of the others.
double billing(const Counts& counts, const std::vector<std::pair<std::string, double>>& weights, bool max_tres,
               bool whole = true) {
  auto count = [&](const std::string& name) {
    const auto it = counts.find(name);
    return it == counts.end() ? 0.0 : it->second;
  };
  if (weights.empty()) return std::floor(count("cpu"));
  double sum = 0, node = 0;
  for (const auto& [name, w] : weights) {
    if (name == "billing") continue;
    const bool per_node = name == "cpu" || name == "mem" || name == "node" || name.rfind("gres/", 0) == 0;
    if (max_tres && per_node) node = std::max(node, w * count(name));
    else sum += w * count(name);
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
  // _calc_part_tres: the partition's nodes (any state) summed, its node count, its billing
  std::map<const Partition*, Counts> total;
  std::map<const Partition*, double> first_mem;  // _mem_per_node_part: its first node's RealMemory
  for (const Partition& p : cluster.partitions) {
    Counts& t = total[&p];
    for (const Node& n : cluster.every_node) {
      if (std::find(n.partitions.begin(), n.partitions.end(), p.name) == n.partitions.end()) continue;
      if (!first_mem.count(&p)) first_mem[&p] = n.mem;
      t["cpu"] += n.cpus;
      t["mem"] += n.mem;
      t["node"] += 1;
      for (const auto& [name, count] : n.gres) t[name] += count;
    }
    t["billing"] = billing(t, p.billing_weights, mf.max_tres);
  }
  const size_t width = names.size();
  mf.tres_names = names;
  mf.tres_factor.assign(asked.size() * width, 0.0);
  mf.billable.clear();
  for (size_t j = 0; j < asked.size(); ++j) {
    const TresAsked& a = asked[j];
    if (a.partition == nullptr) continue;
    const auto it = first_mem.find(a.partition);
    Counts job = a.gres;
    job["cpu"] = a.cpu;
    job["node"] = a.node;
    job["mem"] = std::floor(std::isnan(a.mem) ? (it == first_mem.end() ? 0.0 : it->second) * a.node : a.mem);
    job["billing"] = billing(job, a.partition->billing_weights, mf.max_tres);
    // calc_job_billable_tres, from what it is given (its request: the same but for a node taken whole)
    if (!a.partition->billing_weights.empty()) {
      mf.billable.resize(asked.size(), 0.0);
      mf.billable[j] = billing(job, a.partition->billing_weights, mf.max_tres, false);
    }
    const Counts& part = total.at(a.partition);
    for (size_t k = 0; k < width; ++k) {
      const auto v = job.find(names[k]);
      const auto of = part.find(names[k]);
      if (v != job.end() && v->second > 0 && of != part.end() && of->second > 0)
        mf.tres_factor[j * width + k] = v->second / of->second;
    }
  }
}

}  // namespace colmatch::loaders::slurm
