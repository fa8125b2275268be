#!/usr/bin/env bash
# Real Grid Engine's job order (issue 43 item 1): sge_priority(5)'s prio, nurg, npprior and urgency terms,
# and which jobs one scheduling run starts, on the oracle farm of sge_oracle.sh (four simulated hosts,
# all.q with 4 slots each). NOT run in CI: needs root and the qmaster (`sge_oracle.sh setup` first).
#
#   bash bench/peers/sge_priority.sh run JOBS OUT [WEIGHTS]
#   MPI_SLOTS=3 bash bench/peers/sge_priority.sh run ...   # the mpi PE's slot total (default 999)
#   PE_LIST="smp mpi rr two" bash bench/peers/sge_priority.sh run ...   # all.q's pe_list (default smp mpi)
#   QSORT=load LOAD_FORMULA=cores bash bench/peers/sge_priority.sh run ...   # queue_sort_method, load_formula
#   (other farm changes, e.g. bench/peers/sge_pe_hosts.sh's second queue, are made before the run)
#   FARM_AS_IS=1 bash bench/peers/sge_priority.sh run ...   # any farm (e.g. sge_farms.sh farm80) untouched
#
# JOBS: one job a line of qsub options (`#` comments; a line `sleep N` waits N seconds between
# submissions, so that submission times differ; `@USER options` submits as that local user (runuser);
# `ot N` gives the last job N override tickets (qalter -ot); `start` enables the queues for one
# scheduling run and disables them again, so that the jobs it started run while the rest are submitted).
# WEIGHTS: sched_conf lines `key value` set first (weight_priority 1.0, ...). Writes into OUT (which must
# not exist):
#   farm/          tools/sge-dump.sh --no-jobs of the farm, queues enabled (what colmatch matches on)
#   farm/qstat-r.xml, farm/qstat-j.xml, farm/dump-time.txt
#                  the jobs, pending, as qstat printed them while every queue was disabled and the scheduler
#                  had prioritized them (a held job has no priority: Grid Engine computes none)
#   qstat-urg.xml  qstat -urg -xml then: urg, rrcontr, wtcontr, dlcontr, nurg per job
#   qstat-pri.xml  qstat -pri -xml then: prio, nurg, npprior, ntckts, ppri per job
#   qstat-ext.xml  qstat -ext -xml then: tickets, otickets, ftickets, stickets, department per job
#   started.xml    qstat -xml after all.q was enabled and one scheduling run dispatched what fits
#   started-g-t.txt  qstat -g t then: a MASTER or SLAVE line per slot of each started job, per queue instance
#   refused.txt    the lines qsub refused, with its message
#   scheduling-info.txt  qstat -j's scheduling info lines of each job after that run (why it waits)
# The farm's complexes get urgencies (lic 100, cores 10, tmo 1, arch_s 500) and two PEs (smp $pe_slots,
# urgency_slots min; mpi $fill_up, urgency_slots max) on all.q; `teardown` of sge_oracle.sh and its
# `setup` again restore the plain oracle farm.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/sge_common.sh"

pe() {  # name rule urgency_slots [slots]
  local f; f=$(mktemp)
  printf 'pe_name %s\nslots %s\nuser_lists NONE\nxuser_lists NONE\nstart_proc_args NONE\nstop_proc_args NONE\nallocation_rule %s\ncontrol_slaves FALSE\njob_is_first_task TRUE\nurgency_slots %s\naccounting_summary FALSE\nqsort_args NONE\n' \
    "$1" "${4:-999}" "$2" "$3" > "$f"
  qconf -Mp "$f" >/dev/null 2>&1 || qconf -Ap "$f" >/dev/null
  rm -f "$f"
}

run() {
  local jobs=$1 out=$2 weights=${3:-}
  [ -e "$out" ] && { echo "sge_priority: $out exists" >&2; exit 1; }
  settings
  qdel -f -u "*" >/dev/null 2>&1 || true
  sleep 3
  if [ -z "${FARM_AS_IS:-}" ]; then farm_setup; fi
  sched schedule_interval 0:0:2
  if [ -n "$weights" ]; then
    # shellcheck disable=SC2046
    sched $(grep -v '^#' "$weights")
  fi
  run_jobs "$jobs" "$out"
}

# The oracle farm's changes: complex urgencies, the smp and mpi PEs on all.q, its slots, the queue sort.
farm_setup() {
  # urgencies: complex(5)'s last column
  local cx; cx=$(mktemp)
  qconf -sc | awk '$1=="lic"{$8=100} $1=="cores"{$8=10} $1=="tmo"{$8=1} $1=="arch_s"{$8=500} {print}' > "$cx"
  qconf -Mc "$cx" >/dev/null 2>&1 || true
  rm -f "$cx"
  pe smp '$pe_slots' min
  pe mpi '$fill_up' max "${MPI_SLOTS:-999}"
  qconf -mattr queue pe_list "${PE_LIST:-smp mpi}" all.q >/dev/null
  qconf -mattr queue slots 4 all.q >/dev/null
  sched queue_sort_method "${QSORT:-seqno}" load_formula "${LOAD_FORMULA:-np_load_avg}"
}

run_jobs() {
  local jobs=$1 out=$2
  qmod -e '*' >/dev/null 2>&1 || true
  mkdir -p "$out"
  bash "$root/tools/sge-dump.sh" "$out/farm" --no-jobs
  qmod -d '*' >/dev/null
  : > "$out/refused.txt"
  local line msg as last=""
  while IFS= read -r line || [ -n "$line" ]; do
    case "$line" in
      '' | \#*) continue ;;
      "sleep "*) sleep "${line#sleep }"; continue ;;
      "ot "*) qalter -ot "${line#ot }" "$last" >/dev/null; continue ;;
      start) qmod -e '*' >/dev/null; sleep 6; qmod -d '*' >/dev/null; continue ;;
    esac
    as=()
    if [ "${line#@}" != "$line" ]; then
      local who=${line%% *}
      as=(runuser -u "${who#@}" -- env SGE_ROOT="$SGE_ROOT" SGE_CELL="$SGE_CELL")
      if [ "$line" = "$who" ]; then line=""; else line=${line#* }; fi
    fi
    # shellcheck disable=SC2086
    if ! msg=$(cd /tmp && "${as[@]}" qsub -b y -w n -wd /tmp -o /dev/null -e /dev/null $line /bin/sleep 600 2>&1); then
      printf '%s\t%s\n' "$line" "$(echo "$msg" | tr '\n' ' ')" >> "$out/refused.txt"
    else
      last=$(echo "$msg" | sed -n 's/^Your job \([0-9]*\).*/\1/p')
    fi
  done < "$jobs"
  sleep 6  # scheduling runs prioritize the pending jobs
  (export TZ=UTC; qstat -u '*' -r -xml > "$out/farm/qstat-r.xml"; qstat -j '*' -xml > "$out/farm/qstat-j.xml" 2>/dev/null || true)
  date +%s > "$out/farm/dump-time.txt"  # the jobs' dump: running jobs' load correction decays from it
  qstat -u '*' -urg -xml > "$out/qstat-urg.xml"
  qstat -u '*' -pri -xml > "$out/qstat-pri.xml"
  qstat -u '*' -ext -xml > "$out/qstat-ext.xml"
  qconf -ssconf > "$out/farm/qconf-ssconf.txt"
  qmod -e '*' >/dev/null
  sleep 8
  qstat -u '*' -xml > "$out/started.xml"  # started: a queue_name (state t or r)
  qstat -u '*' -g t > "$out/started-g-t.txt"  # each started job's slots queue instance by queue instance
  qstat -j '*' 2>/dev/null | grep -E '^(job_number|scheduling info|  *(cannot|queue|job|The|All))' > "$out/scheduling-info.txt" || true
  [ -n "${KEEP:-}" ] || qdel -f -u "*" >/dev/null 2>&1 || true
  echo "sge_priority: $(grep -c '<JB_job_number>' "$out/qstat-pri.xml") jobs, $(grep -c '<JB_job_number>' "$out/started.xml") started -> $out" >&2
}

case "${1:-}" in
  run) run "$2" "$3" "${4:-}" ;;
  *) echo "usage: $0 run JOBS OUT [WEIGHTS]" >&2; exit 1 ;;
esac
