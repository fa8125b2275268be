#!/usr/bin/env bash
# The oracle farm of sge_oracle.sh made into one where parallel jobs span queue instances of a host
# (issue 43 item 3), then bench/peers/sge_priority.sh records where one scheduling run puts the jobs of
# bench/peers/sge_pe_hosts_jobs.txt. NOT run in CI (root, the qmaster: `sge_oracle.sh setup` first).
#
#   bash bench/peers/sge_pe_hosts.sh OUT
#
# The farm: lic's default 0 (no job takes a licence unasked), node0004 without its FORCED frc, all.q
# (4 slots) on node0001-4 with seq_no 1-4, q2.q (4 slots) on node0003-4 with seq_no 13 and 14: queue
# instances in the order all.q@node0001..4, q2.q@node0003, q2.q@node0004, so that hosts 3 and 4 have
# two instances each. PEs smp ($pe_slots), mpi ($fill_up), rr ($round_robin), two (allocation_rule 2).
# Weights: weight_priority 1 and the others 0, so that qsub -p alone orders the jobs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/sge_common.sh"
out=${1:?usage: sge_pe_hosts.sh OUT}
settings
qdel -f -u '*' >/dev/null 2>&1 || true
qconf -sc | awk '$1=="lic"{$7=0} {print}' > /tmp/sge_pe_hosts.cx
qconf -Mc /tmp/sge_pe_hosts.cx >/dev/null 2>&1 || true
rm -f /tmp/sge_pe_hosts.cx
qconf -dattr exechost complex_values frc=1 node0004 >/dev/null 2>&1 || true
for pe in "smp \$pe_slots" "mpi \$fill_up" "rr \$round_robin" "two 2"; do  # (smp, mpi: sge_priority.sh remakes them)
  set -- $pe
  f=$(mktemp)
  printf 'pe_name %s\nslots 999\nuser_lists NONE\nxuser_lists NONE\nstart_proc_args NONE\nstop_proc_args NONE\nallocation_rule %s\ncontrol_slaves FALSE\njob_is_first_task TRUE\nurgency_slots min\naccounting_summary FALSE\nqsort_args NONE\n' "$1" "$2" > "$f"
  qconf -Mp "$f" >/dev/null 2>&1 || qconf -Ap "$f" >/dev/null
  rm -f "$f"
done
qconf -mattr queue seq_no "0,[node0001=1],[node0002=2],[node0003=3],[node0004=4]" all.q >/dev/null
qconf -dq q2.q >/dev/null 2>&1 || true
add_queue q2.q <<EOQ
hostlist node0003 node0004
seq_no 10,[node0003=13],[node0004=14]
slots 4
pe_list smp mpi rr two
EOQ
w=$(mktemp)
printf 'weight_priority 1.0\nweight_urgency 0.0\nweight_ticket 0.0\nweight_waiting_time 0.0\n' > "$w"
PE_LIST="smp mpi rr two" bash "$here/sge_priority.sh" run "$here/sge_pe_hosts_jobs.txt" "$out" "$w"
rm -f "$w"
