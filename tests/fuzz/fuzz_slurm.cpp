// libFuzzer targets for `--format slurm` (issue 26), chosen at build time by COLMATCH_FUZZ_SLURM_PART:
//   "cluster": the input is scontrol-node.txt --8<-- scontrol-partition.txt [--8<-- scontrol-config.txt
//              [--8<-- sshare.txt [--8<-- sacctmgr-qos.txt]]] (a cluster of the fuzzer's; the config says whether
//              the main pass takes job records, and the scheduling settings, loaders/slurm_settings.hpp; sshare
//              the fair-share tree; sacctmgr-qos.txt the QOS priorities);
//   "jobs":    the input is a file of sbatch option lines (constraints included) on datasets/slurm/c100;
//   "squeue":  the input is squeue --json on datasets/slurm/c100 (its pending jobs);
//   "scontrol": the input is scontrol show job -o on datasets/slurm/c100 (its pending jobs);
//   "sacct":   the input is sacct -a -P output replayed on datasets/slurm/c100 (matched and simulated).
// Each loads through the format registry as the CLI does, then matches.
#include <filesystem>
#include <string>

#include <algorithm>

#include "engine/schedule/simulation.hpp"
#include "loaders/formats.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace colmatch;
namespace fs = std::filesystem;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fuzz::run([&] {
    const std::string part = COLMATCH_FUZZ_SLURM_PART;
    loaders::FormatArgs args;
    if (part == "cluster") {
      const fs::path dir = fs::temp_directory_path() / ("colmatch-fuzz-slurm-" + std::to_string(::getpid()));
      fs::create_directories(dir);
      const auto [nodes, rest] = fuzz::split(data, size);
      const auto [partitions, tail] = fuzz::split(reinterpret_cast<const uint8_t*>(rest.data()), rest.size());
      const auto [config, shares] = fuzz::split(reinterpret_cast<const uint8_t*>(tail.data()), tail.size());
      const auto [sshare, qos] = fuzz::split(reinterpret_cast<const uint8_t*>(shares.data()), shares.size());
      std::ofstream(dir / "scontrol-node.txt", std::ios::binary | std::ios::trunc)
          .write(nodes.data(), static_cast<std::streamsize>(nodes.size()));
      std::ofstream(dir / "scontrol-partition.txt", std::ios::binary | std::ios::trunc)
          .write(partitions.data(), static_cast<std::streamsize>(partitions.size()));
      if (config.empty()) fs::remove(dir / "scontrol-config.txt");
      else
        std::ofstream(dir / "scontrol-config.txt", std::ios::binary | std::ios::trunc)
            .write(config.data(), static_cast<std::streamsize>(config.size()));
      if (sshare.empty()) fs::remove(dir / "sshare.txt");
      else
        std::ofstream(dir / "sshare.txt", std::ios::binary | std::ios::trunc)
            .write(sshare.data(), static_cast<std::streamsize>(sshare.size()));
      if (qos.empty()) fs::remove(dir / "sacctmgr-qos.txt");
      else
        std::ofstream(dir / "sacctmgr-qos.txt", std::ios::binary | std::ios::trunc)
            .write(qos.data(), static_cast<std::streamsize>(qos.size()));
      args["dump"] = dir.string();
      args["jobs"] = fuzz::temp_file(
          "jobs", "-C a|b&c --mem=1000\n--gres=gpu:1 -c 2\n-p p1,p2 -t 10\n--prefer x -C y -c 1\n-n 9 -N 1\n-n 9\n");
    } else if (part == "jobs") {
      args["dump"] = std::string(COLMATCH_SOURCE_DIR) + "/datasets/slurm/c100";
      args["jobs"] = fuzz::temp_file("jobs", std::string_view(reinterpret_cast<const char*>(data), size));
    } else if (part == "sacct") {
      args["dump"] = std::string(COLMATCH_SOURCE_DIR) + "/datasets/slurm/c100";
      args["accounting"] = fuzz::temp_file("sacct", std::string_view(reinterpret_cast<const char*>(data), size));
      const loaders::Dataset ds = loaders::load_format(*loaders::find_format("slurm"), args);
      fuzz::match(ds);
      SimConfig policy;
      policy.until = ds.jobs.size() ? 864000 + *std::min_element(ds.jobs.submit.begin(), ds.jobs.submit.end()) : 0;
      (void)simulate(ds.catalog, ds.taskers, ds.jobs, policy, kernels::active());
      return;
    } else {  // the cluster c100 with this squeue.json, or this scontrol-job.txt (and no squeue.json)
      const std::string queue = part == "scontrol" ? "scontrol-job.txt" : "squeue.json";
      const fs::path dir = fs::temp_directory_path() / ("colmatch-fuzz-" + part + "-" + std::to_string(::getpid()));
      if (!fs::exists(dir / "scontrol-partition.txt")) {
        fs::create_directories(dir);
        for (const auto& e : fs::directory_iterator(std::string(COLMATCH_SOURCE_DIR) + "/datasets/slurm/c100"))
          if (e.path().filename() != "squeue.json")
            fs::copy(e.path(), dir / e.path().filename(), fs::copy_options::overwrite_existing);
      }
      std::ofstream(dir / queue, std::ios::binary | std::ios::trunc)
          .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
      args["dump"] = dir.string();
    }
    fuzz::match(loaders::load_format(*loaders::find_format("slurm"), args));
  });
}
