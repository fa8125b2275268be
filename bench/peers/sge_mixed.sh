#!/usr/bin/env bash
# Seeded random jobs (bench/peers/sge_mixed_jobs.py) released into one scheduling run of a real Grid
# Engine on the farm of bench/peers/sge_pe_hosts.sh (run it first), under Debian's scheduler weights
# (urgency, tickets and waiting time), recorded by bench/peers/sge_priority.sh. NOT run in CI (root, the
# qmaster).
#
#   bash bench/peers/sge_mixed.sh SEED N MOST OUT     # e.g. 1 60 6 /tmp/mixed-1
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/sge_common.sh"
settings
jobs=$(mktemp)
/usr/bin/python3 "$here/sge_mixed_jobs.py" "$1" "$2" "$3" > "$jobs"
qconf -rattr queue seq_no "0,[node0001=1],[node0002=2],[node0003=3],[node0004=4]" all.q >/dev/null
qconf -rattr queue seq_no "10,[node0003=13],[node0004=14]" q2.q >/dev/null
w=$(mktemp)
printf 'weight_priority 0.0\nweight_urgency 0.5\nweight_ticket 0.5\nweight_waiting_time 0.278\n' > "$w"
QSORT=seqno PE_LIST="smp mpi rr two" bash "$here/sge_priority.sh" run "$jobs" "$4" "$w"
cp "$jobs" "$4/jobs.txt"
rm -f "$w" "$jobs"
