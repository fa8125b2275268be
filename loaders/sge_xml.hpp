// What Grid Engine's `qstat -xml` prints (Son of Grid Engine 8.1.9, qstat(1) and its schemas qstat.xsd
// and detailed_job_info.xsd), read with expat as a stream: only the text, the farm and the jobs are put
// together by loaders/sge.cpp.
//
//   qstat -u '*' -r -xml        pending and running jobs with their requests (job_list elements)
//   qstat -f -xml               the same with every queue instance (Queue-List: name, state)
//   qstat -j '*' -xml           each job's details (JB_priority, JB_group, JB_project, submission epoch)
//   qhost -F -xml               hosts and their resource values (where qconf -se is not at hand)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace colmatch::loaders::sge {

/// The largest qstat XML file read (4 GiB), the deepest nesting (64) and the longest text of one element
/// (64 KiB): past them, a LoadError naming the file and line.
inline constexpr uint64_t kMaxXmlBytes = uint64_t{4} << 30;
inline constexpr size_t kMaxXmlDepth = 64;
inline constexpr size_t kMaxXmlText = size_t{64} << 10;

/// One job_list element of `qstat -r -xml`: a job, or (array jobs) a task or a range of pending tasks.
struct QstatJob {
  std::string number;      ///< JB_job_number
  std::string tasks;       ///< `tasks`: a task id (running) or a range `1-10:1` (pending); empty: not an array
  std::string name;        ///< JB_name
  std::string owner;       ///< JB_owner
  std::string list_state;  ///< the job_list's state attribute: "pending" or "running"
  std::string state;       ///< `state`: qw, hqw, r, t, Eqw, ...
  std::string submitted;   ///< JB_submission_time as printed (ISO 8601 local time, no zone)
  std::string started;     ///< JAT_start_time (running jobs)
  std::string queue;       ///< queue_name: QUEUE@HOST of a running job (its master queue), else empty
  std::string slots;       ///< slots
  std::string prio;        ///< JAT_prio: the normalized priority Grid Engine dispatches by (qstat's prior)
  std::vector<std::pair<std::string, std::string>> hard, soft;  ///< hard_request / soft_request name, value
  std::vector<std::string> hard_queues, soft_queues;            ///< hard_req_queue / soft_req_queue
  std::vector<std::string> master_queues;                       ///< master_hard_req_queue (qsub -masterq)
  std::string pe, pe_range;                                     ///< requested_pe's name attribute and text (`4`, `2-8`)
  size_t line = 0;                                              ///< line of the job_list element
};

/// Reads every job_list of a `qstat -xml` file (under queue_info and job_info). Throws LoadError for
/// malformed XML, a root that is not job_info, a job_list without JB_job_number, or the bounds above.
std::vector<QstatJob> read_qstat_jobs(const std::string& path);

/// One Queue-List of `qstat -f -xml`: the queue instance and its state letters (empty when none).
struct QueueInstanceState {
  std::string name, state;
  size_t line = 0;
};

/// Reads the Queue-List elements of `qstat -f -xml`. Throws LoadError as read_qstat_jobs.
std::vector<QueueInstanceState> read_queue_states(const std::string& path);

/// One host of `qhost -F -xml`: its resource values with their dominance (level letter g, h or q, then
/// l for a load value, f for a fixed one, c for a consumable's amount free when qhost ran), as printed.
struct QhostHost {
  struct Value {
    std::string name, dominance, text;
  };
  std::string name;
  std::vector<Value> values;
  size_t line = 0;
};

/// Reads the host elements of `qhost -F -xml`. Throws LoadError as read_qstat_jobs (a host without a name,
/// a resourcevalue without name or dominance, a root that is not qhost).
std::vector<QhostHost> read_qhost(const std::string& path);

/// One job of `qstat -j '*' -xml` (detailed_job_info/djob_info/element).
struct JobDetail {
  std::string number, owner, group, account, project;
  std::string priority;          ///< JB_priority: the POSIX priority plus 1024 (qsub -p 0 is 1024)
  std::string submission;        ///< JB_submission_time: seconds since the epoch
  std::string deadline;          ///< JB_deadline: qsub -dl in seconds since the epoch, 0 for none
  std::string jobshare;          ///< JB_jobshare: qsub -js, the job's functional shares
  std::string override_tickets;  ///< JB_override_tickets: qalter -ot
  size_t line = 0;
};

/// Reads the job elements of `qstat -j '*' -xml`. Throws LoadError as read_qstat_jobs.
std::vector<JobDetail> read_job_details(const std::string& path);

}  // namespace colmatch::loaders::sge
