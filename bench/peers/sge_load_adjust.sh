#!/usr/bin/env bash
# Grid Engine's job_load_adjustments within one scheduling run (issue 43 item 2), on the farm
# bench/peers/sge_pe_hosts.sh made (run it first). The simulated hosts get load values: this machine's
# sge_execd (Debian's gridengine-exec) reports its own, and the qmaster copies them to every simulated
# host whose complex_values name it as `load_report_host` (sge_c_report.c), so that all four hosts have
# the same np_load_avg and num_proc; the load formula adds their fixed `cores` scaled apart, and every
# slot a job takes on a host in the run adds job_load_adjustments' np_load_avg=0.50 / num_proc to that
# host's np_load_avg for the jobs after it (debit.c, sge_complex_schedd.c). bench/peers/sge_priority.sh
# records where one run puts the jobs of bench/peers/sge_load_adjust_jobs.txt. NOT run in CI (root, the
# qmaster, an execution daemon).
#
#   bash bench/peers/sge_load_adjust.sh OUT METHOD FORMULA [SEQ]   # e.g. OUT load np_load_avg+cores*0.02
#   SEQ "same": every all.q instance seq_no 0 (q2.q 10), so that seqno sorts by load within all.q
#   DECAY=0:1:0 JOBS=bench/peers/sge_load_adjust_running_jobs.txt bash bench/peers/sge_load_adjust.sh ...
#     load_adjustment_decay_time (default 0:7:30) and the jobs file (default sge_load_adjust_jobs.txt)
#   THRESHOLDS=np_load_avg=1.75 bash bench/peers/sge_load_adjust.sh ...   # all.q's and q2.q's load_thresholds
#     (default NONE, as sge_oracle.sh made them)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/sge_common.sh"
out=${1:?usage: sge_load_adjust.sh OUT METHOD FORMULA [SEQ]}
settings
if ! qconf -sc | grep -q '^load_report_host '; then
  cx=$(mktemp)
  qconf -sc > "$cx"
  echo "load_report_host lrh STRING == NO NO NONE 0" >> "$cx"
  qconf -Mc "$cx" >/dev/null
  rm -f "$cx"
fi
me=$(hostname)
for h in node0001 node0002 node0003 node0004; do
  qconf -aattr exechost complex_values "load_report_host=$me" "$h" >/dev/null 2>&1 || true
done
if ! qconf -se "$me" >/dev/null 2>&1; then add_host "$me" NONE; fi
pgrep -x sge_execd >/dev/null || (cd / && /usr/sbin/sge_execd)
sleep 45  # a load report copied to every simulated host
if [ "${4:-}" = same ]; then  # (in the recorded run the per-host seq_no values stayed: load-adjust-seqno)
  qconf -rattr queue seq_no 0 all.q >/dev/null
else
  qconf -rattr queue seq_no "0,[node0001=1],[node0002=2],[node0003=3],[node0004=4]" all.q >/dev/null
fi
qconf -rattr queue seq_no "10,[node0003=13],[node0004=14]" q2.q >/dev/null
for q in all.q q2.q; do qconf -mattr queue load_thresholds "${THRESHOLDS:-NONE}" "$q" >/dev/null; done
sched job_load_adjustments np_load_avg=0.50 load_adjustment_decay_time "${DECAY:-0:7:30}"
w=$(mktemp)
printf 'weight_priority 1.0\nweight_urgency 0.0\nweight_ticket 0.0\nweight_waiting_time 0.0\n' > "$w"
QSORT=$2 LOAD_FORMULA=$3 PE_LIST="smp mpi rr two" bash "$here/sge_priority.sh" run "${JOBS:-$here/sge_load_adjust_jobs.txt}" "$out" "$w"
rm -f "$w"
