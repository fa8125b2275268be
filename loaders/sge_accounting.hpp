// Grid Engine's accounting file ($SGE_ROOT/$SGE_CELL/common/accounting; accounting(5) of Son of Grid
// Engine 8.1.9): one colon-separated record per finished job or array task, `#` comment lines. Only the
// text: loaders/sge.cpp makes the replayed jobs.
//
// Fields, 1-based: 1 qname, 2 hostname, 3 group, 4 owner, 5 job_name, 6 job_number, 7 account,
// 8 priority, 9 submission_time, 10 start_time, 11 end_time, 12 failed, 13 exit_status, 14 ru_wallclock,
// 15-31 the rusage fields, 32 project, 33 department, 34 granted_pe, 35 slots, 36 task_number, 37 cpu,
// 38 mem, 39 io, 40 category, 41 iow, 42 pe_taskid, 43 maxvmem, 44 arid, 45 ar_submission_time. Times
// are seconds since the epoch. The category (the job's `-l`, `-pe`, `-q` ... as qsub stored them) may
// hold colons of its own: the fields after it are counted from the end of the line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace colmatch::loaders::sge {

/// The most records read from one accounting file (100M): past it, a LoadError.
inline constexpr size_t kMaxAccountingRecords = size_t{100} << 20;

/// One accounting record, the fields colmatch uses.
struct AccountingRecord {
  std::string qname, hostname, group, owner, job_name, job_number, account, project, department, granted_pe;
  std::string category;  ///< e.g. `-U users -l h_rt=600,mem=2G -pe mpi 4 -q all.q`; "NONE" when none
  double priority = 0;   ///< POSIX priority (-1023..1024)
  double submission = 0, start = 0, end = 0;  ///< seconds since the epoch
  uint32_t failed = 0;                        ///< 0: ran; else why it failed (accounting(5))
  double wallclock = 0;                       ///< ru_wallclock, seconds
  uint32_t slots = 1;
  uint64_t task_number = 0;  ///< 0 for a job that is not an array
  size_t line = 0;
};

/// Reads every record of an accounting file (plain or gzip). Throws LoadError naming file, line and
/// field for a record with fewer than 43 fields, a number that is not one (a negative time, slots 0 or
/// past 2^31), or more records than the bound.
std::vector<AccountingRecord> read_accounting(const std::string& path);

/// The words of a category string as qsub(1) options: `-l a=b,c=d -pe mpi 4 -q all.q` ->
/// {"-l", "a=b,c=d", "-pe", "mpi", "4", "-q", "all.q"}; "NONE" or blank is empty.
std::vector<std::string> category_words(const std::string& category);

}  // namespace colmatch::loaders::sge
