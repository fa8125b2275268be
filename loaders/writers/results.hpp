// Result writers: results.csv, categories.csv, summary.json (and pools.csv) in an output folder.
#pragma once

#include <string>

#include "engine/batch/matcher.hpp"
#include "loaders/dataset.hpp"

namespace colmatch::writers {

/// What summary.json says about the run besides the outcome itself.
struct RunInfo {
  std::string format;  ///< native, google2011, openb
  unsigned threads = 1;
  double load_s = 0;        ///< time spent reading inputs
  bool huge_pages = false;  ///< the heap is mapped with transparent huge pages (summary.json's huge_pages)
  bool pools = false;       ///< also write pools.csv (DIRAC submit pools with their eligible taskers)
};

/// Writes into `dir` (created if missing):
///   results.csv     header `job,status,tasker,slots,reason`; input job order; per job one row per
///                   allocation when assigned (tasker name, slots there, the job's note if any; several for
///                   $fill_up jobs), else one row pending (reason, then `; ` and the note if any) or rejected
///                   (reason). Fields quoted per RFC 4180.
///   categories.csv  `category,jobs,slots,eligible_taskers,representation,request`: one row per job category
///                   (hash in hex), the DIRAC submit-pool view.
///   summary.json    counts, categories, seconds per phase, the jobs per note (JobTable::note: "depth
///                   limit" for an Accelerator expansion curtailed), threads, instruction set, huge pages.
///   pools.csv       with RunInfo::pools: `pool,jobs,eligible,taskers,requirements`, one row per distinct
///                   hard request (DIRAC submit pool: FNV-1a hash of the requirements in canonical, name-sorted
///                   form) with the taskers eligible for it, `;`-separated (those of its first category).
/// Each file is written to a temporary name and renamed, so a failure leaves no partial file.
/// Throws WriteError on I/O failure.
void write_results(const std::string& dir, const loaders::Dataset& ds, const MatchOutcome& m, const RunInfo& info);

/// write_results with categories.csv already formatted: `categories` is categories_csv(ds, m), e.g. made
/// beside dispatch (run_match's beside_dispatch), where one core waits on the other.
void write_results(const std::string& dir, const loaders::Dataset& ds, const MatchOutcome& m, const RunInfo& info,
                   std::string categories);

/// `{"note": jobs, ...}`: how many jobs carry each note (JobTable::note), for summary.json.
std::string notes_json(const JobTable& jobs);

/// The text of results.csv (see write_results; also the Python module's results frame).
std::string results_csv(const loaders::Dataset& ds, const MatchOutcome& m);

/// The text of categories.csv (see write_results).
std::string categories_csv(const loaders::Dataset& ds, const MatchOutcome& m);

/// The text of summary.json (also printed by the CLI).
std::string summary_json(const loaders::Dataset& ds, const MatchOutcome& m, const RunInfo& info);

}  // namespace colmatch::writers
