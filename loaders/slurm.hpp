// A Slurm cluster as its controller describes itself (`--format slurm`): the folder tools/slurm-dump.sh
// writes, and jobs as sbatch options. Slurm 22.05's meaning for every field read.
//
// DIR:
//   scontrol-node.txt        scontrol show node -o        (required)
//   scontrol-partition.txt   scontrol show partition -o   (required)
// The farm: one tasker per node (named by NodeName), ranked by Weight (lower first), then fewer CPUs,
// then name, as Slurm's select/cons_tres picks a node for a job on an idle cluster (checked with salloc); its
// attributes: `feature` (AvailableFeatures, a set), `partition` (the UP partitions holding it, a set), `NodeName`;
// consumables per job: `cpus` (CPUTot), `mem` (RealMemory, MiB, as bytes), `gres/gpu` and `gres/gpu:TYPE` (Gres:
// gpu:a100:4 gives 4 of each). CPUAlloc, AllocMem and GresUsed are what running jobs hold (Dataset::in_use). Nodes
// DOWN, DRAIN(ED/ING), FAIL, MAINT, FUTURE or NOT_RESPONDING without CLOUD are left out with a warning (a CLOUD node
// powering up is idle).
//
// Jobs: `--jobs FILE` (scontrol show job -o output when its first line starts with JobId=,
// loaders/slurm_scontrol_job.hpp; else sbatch lines, read_sbatch_jobs), else DIR/squeue.json's pending jobs
// (loaders/slurm_squeue.hpp), else DIR/scontrol-job.txt's (ids as Slurm's, `123_4` for array tasks, held ones
// noted). Each: -c/--cpus-per-task x
// -n/--ntasks CPUs, --mem or --mem-per-cpu, -C/--constraint (loaders/slurm_constraint.hpp), --gres=gpu[:TYPE]:N,
// --gpus, -p (several allowed; none: the Default=YES partition), -w (one node), -x, -t against the partitions' MaxTime,
// --exclusive (a consumable `jobs`: 1 a job, all of it an exclusive one). Partitions of different PriorityTier:
// a job's tier leads its priority (priority + tier x 2^32), as slurmctld sorts its queue by the tier first. A job
// asking more than one node, node counts,
// --mem=0 or an option colmatch does not read is rejected with the reason; a
// constraint Slurm refuses is rejected with Slurm's message.
#pragma once

#include <string>

#include "loaders/dataset.hpp"
#include "loaders/line_reader.hpp"

namespace colmatch::loaders {

/// Loads a Slurm dump and, when `jobs` is given, its jobs (sbatch option lines or scontrol show job -o
/// output). Throws LoadError naming file, line and field.
/// With `accounting` (sacct -a -P output, loaders/slurm_sacct.hpp) the jobs are its records instead:
/// each arrives at its Submit with its recorded request and runs End - Start (a job that never ran is
/// replayed with no length and noted), its Timelimit as the walltime.
Dataset load_slurm(const std::string& dump_dir, const std::string& jobs, const std::string& accounting = "",
                   const ProgressFn& progress = {}, LoadMode mode = LoadMode::Snapshot);

}  // namespace colmatch::loaders
