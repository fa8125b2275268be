#!/usr/bin/env bash
# Grid Engine's queue sort (issue 43 item 2): queue_sort_method and load_formula over the hosts' values,
# on the farm bench/peers/sge_pe_hosts.sh made (run it first), then bench/peers/sge_priority.sh records where one scheduling run puts the jobs of
# bench/peers/sge_queue_sort_jobs.txt, with the seq_no below. The formula reads the hosts' `cores` (node0001
# 16, node0002 32, node0003 8, node0004 4): fixed values, which job_load_adjustments do not move within a run. NOT run in
# CI (root, the qmaster).
#
#   bash bench/peers/sge_queue_sort.sh OUT METHOD FORMULA     # e.g. OUT load cores, OUT seqno -cores
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/sge_common.sh"
out=${1:?usage: sge_queue_sort.sh OUT METHOD FORMULA}
settings
# seq_no: all.q@node0001..4 = 1..4, q2.q@node0003 = 13, q2.q@node0004 = 1 (-rattr: the whole value)
qconf -rattr queue seq_no "0,[node0001=1],[node0002=2],[node0003=3],[node0004=4]" all.q >/dev/null
qconf -rattr queue seq_no "10,[node0003=13],[node0004=1]" q2.q >/dev/null
w=$(mktemp)
printf 'weight_priority 1.0\nweight_urgency 0.0\nweight_ticket 0.0\nweight_waiting_time 0.0\n' > "$w"
QSORT=$2 LOAD_FORMULA=$3 PE_LIST="smp mpi rr two" bash "$here/sge_priority.sh" run "$here/sge_queue_sort_jobs.txt" "$out" "$w"
rm -f "$w"
