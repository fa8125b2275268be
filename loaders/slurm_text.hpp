// What Slurm prints and what users write (Slurm 22.05; scontrol(1), sbatch(1)), read as text: the farm and
// the jobs are put together by loaders/slurm_jobs.cpp.
//
//   scontrol show node -o        one node a line: Key=Value fields (a value may hold blanks: OS=Linux 6.1 #1)
//   scontrol show partition -o   one partition a line, the same way
//   scontrol show config         one setting a line: Key = Value
//   sbatch options               one job a line (`-N 1 -C [a|b] --gres=gpu:a100:1 --mem=8000`), or the
//                                `#SBATCH` lines of one submit script, consecutive, as one job
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace colmatch::loaders::slurm {

/// The most hosts one host list may expand to (10M) and the most records a file may hold (10M).
inline constexpr size_t kMaxHosts = size_t{10} << 20;

/// One `scontrol show ... -o` line: its Key=Value fields in order (views into the line it keeps), and its
/// line number.
struct Record {
  std::string text;  ///< the line, trimmed
  struct Field {
    uint32_t key, eq, end;  ///< offsets into `text`: the key's first character, its '=', the value's end
  };
  std::vector<Field> fields;
  size_t line = 0;
  /// The value of `key` (a view into `text`, valid while the record is), or nullopt.
  std::optional<std::string_view> get(std::string_view key) const;
  /// Field i's key and value (i < fields.size()).
  std::string_view key(size_t i) const {
    return std::string_view(text).substr(fields[i].key, fields[i].eq - fields[i].key);
  }
  std::string_view value(size_t i) const {
    return std::string_view(text).substr(fields[i].eq + 1, fields[i].end - fields[i].eq - 1);
  }
};

/// Reads the records of `scontrol show node -o` or `scontrol show partition -o` (`first_key`: NodeName or
/// PartitionName). A field starts at a blank followed by a word and `=`; a value runs to the next field.
/// Throws LoadError naming file and line for a line that does not start with `first_key=`, or past
/// kMaxHosts records.
std::vector<Record> read_records(const std::string& path, std::string_view first_key);

/// The same records one at a time, each given to `each` (the record is reused for the next line: copy what
/// outlives the call): no record list is held, and a record's storage is allocated once for the file.
void for_each_record(const std::string& path, std::string_view first_key,
                     const std::function<void(const Record&)>& each);

/// One setting of `scontrol show config`, and its line.
struct ConfigSetting {
  std::string key, value;
  size_t line = 0;
};
/// The settings of `scontrol show config` (`SchedulerType           = sched/backfill`: one `Key = Value` a line;
/// lines without ` = `, such as its header, skipped), in order. At most kMaxHosts lines (more: LoadError).
std::vector<ConfigSetting> read_config(const std::string& path);

/// A Slurm host list (`n[001-003,010],gpu01`) expanded in order; throws std::invalid_argument for a
/// malformed one (an unclosed bracket, a reversed range) or one of more than `limit` hosts (at most
/// kMaxHosts), before expanding it.
std::vector<std::string> expand_hostlist(std::string_view list, size_t limit = kMaxHosts);

/// `text` as a number when all of it is one decimal number (std::from_chars: no hexadecimal, no blanks,
/// no '+'; "inf" is infinity), else NaN: what Slurm's settings, scontrol's node fields and sshare's
/// columns hold (a weight, RawShares, bf_interval, CPUTot).
double parse_number(std::string_view text);

/// The fields of one line of `-P` output (sacct, sshare, sacctmgr), split at every `sep` (views into
/// `line`; an empty line is one empty field).
std::vector<std::string_view> split_fields(std::string_view line, char sep = '|');

/// A memory size as Slurm reads --mem and RealMemory: a number with an optional K, M, G or T suffix
/// (1024-based; no suffix: MiB). Returns MiB; throws std::invalid_argument.
double parse_mebibytes(std::string_view text);

/// A time as Slurm reads -t and MaxTime: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS; UNLIMITED
/// and INFINITE are infinity. Returns seconds; throws std::invalid_argument.
double parse_slurm_time(std::string_view text);

/// A time as Slurm prints SubmitTime and sacct's Submit (`2026-11-26T16:14:46`, the cluster's local time),
/// read as UTC: seconds since the epoch (only the order of jobs' times matters to a match; dump with
/// TZ=UTC for absolute times). Throws std::invalid_argument for any other text.
double parse_slurm_date(std::string_view text);

/// The count of `name` in a TRES list (`cpu=48,mem=3000M,node=3,billing=48`: name "node" gives 3), or NaN
/// when the list has none or it is not a number.
double tres_count(std::string_view tres, std::string_view name);

/// A per-node TRES list as squeue (tres_per_node) and scontrol (TresPerNode) print it (`gres:gpu:1`,
/// `gres:gpu:a100:2,gres:mps:100`), as --gres reads it (`gpu:1`, `gpu:a100:2,mps:100`).
std::string gres_of_tres(std::string_view tres);

/// A per-job TRES list (tres_per_job, TresPerJob) of GPUs only (`gres:gpu:2`, `gres:gpu:a100:1`), as
/// --gpus reads it (`2`, `a100:1`); "" when it asks for anything else.
std::string gpus_of_tres(std::string_view tres);

/// A per-GPU amount as squeue (cpus_per_tres, memory_per_tres) and scontrol (CpusPerTres, MemPerTres) print
/// --cpus-per-gpu and --mem-per-gpu (`gres:gpu:4`): the number (`4`); "" for anything else.
std::string per_gpu_of_tres(std::string_view tres);

/// One job's sbatch options: each option with its value ("" for a flag), in order, long names
/// (`-C x` is {"constraint", "x"}), and the line the job starts on.
struct SbatchJob {
  std::vector<std::pair<std::string, std::string>> options;
  size_t line = 0;
  std::string error;  ///< what could not be read (an unknown option, a missing value): the job is rejected
};

/// Reads a file of sbatch option lines. Blank lines and `#` lines that are not `#SBATCH` are skipped;
/// consecutive `#SBATCH` lines are one job, and a submit script (from its `#!` or first `#SBATCH` line
/// to the next blank line or option line) is one job whose body lines are not read; any other line
/// that does not start with `-` is a job rejected for it. Quotes group a value ("[a|b]" or '...'). Throws LoadError
/// for an unclosed quote (naming file and line).
std::vector<SbatchJob> read_sbatch_jobs(const std::string& path);

}  // namespace colmatch::loaders::slurm
