#!/usr/bin/env bash
# Real Slurm (22.05.8 from Debian 12) as an oracle for `--format slurm` (issue 26). NOT run in CI: it needs
# root, writes /etc/slurm/slurm.conf and starts slurmctld by hand (../shared/references/slurm-peer.md).
# Every node is State=CLOUD with power saving on, so one slurmctld with no slurmd schedules onto them.
#
#   bash bench/peers/slurm_oracle.sh setup N       # install, write slurm.conf for N nodes, start
#   bash tools/slurm-dump.sh datasets/slurm/c100   # the dump the tests read
#   bash bench/peers/slurm_oracle.sh ask REQUESTS > answers.tsv
#   bash bench/peers/slurm_oracle.sh place REQUESTS > placements.tsv   # one job alone: its node
#   bash bench/peers/slurm_oracle.sh batch JOBS DUMP_DIR > placed.tsv   # held jobs released at once
#   bash bench/peers/slurm_oracle.sh submit JOBS > verdicts.tsv        # refused at submit, or accepted
#   bash bench/peers/slurm_oracle.sh prio JOBS > priorities.tsv        # each job's priority at submit
#   (SCHEDULER=sched/builtin before setup: no backfill, the main scheduling pass alone; EXTRA_CONF: more
#   slurm.conf lines; TIERS, JOBFACTORS, BILLING, FLAT, OVERSUB: see slurm_cluster.py)
#   bash bench/peers/slurm_oracle.sh stop
#
# REQUESTS: one job a line as sbatch options with per-node options only (-C, -c, --mem, --gres, -p),
# words separated by blanks, no shell quoting.
# For each line the TSV has: the line, the nodes Slurm would run it on (`sbatch --test-only -N1-<all>`:
# every node that fits on the empty cluster, as Slurm's host list `n[001-003,010]`; "-" for none), and its verdict:
# "ok", or "error: " and Slurm's message when sbatch refuses it. --test-only ignores a matching OR
# `[a|b]` (slurm-peer.md): such a line is asked with `(a|b)`, which has the same nodes for one node.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
CONF=/etc/slurm/slurm.conf

stop() {
  local pidf=/run/slurmctld.pid
  if [ -f "$pidf" ] && kill -0 "$(cat "$pidf")" 2>/dev/null; then
    kill "$(cat "$pidf")"
    while kill -0 "$(cat "$pidf")" 2>/dev/null; do sleep 0.2; done
  fi
  # (a controller whose pid file is gone: found by its command line, not slurm_run.sh's)
  if pkill -xf "slurmctld -c" 2>/dev/null; then
    while pgrep -xf "slurmctld -c" >/dev/null; do sleep 0.2; done
  fi
}

setup() {
  local n=${1:?number of nodes}
  if ! command -v slurmctld >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurmctld slurm-client >/dev/null
  fi
  stop
  mkdir -p /etc/slurm /var/spool/slurmctld /var/log/slurm
  rm -rf /var/spool/slurmctld/*  # no state of an earlier cluster
  chown slurm: /var/spool/slurmctld /var/log/slurm 2>/dev/null || true
  {
    cat <<CONF
ClusterName=colmatch
SlurmctldHost=$(hostname)
AuthType=auth/none
CredType=cred/none
SlurmUser=root
StateSaveLocation=/var/spool/slurmctld
SlurmctldPidFile=/run/slurmctld.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=${SCHEDULER:-sched/backfill}
SchedulerParameters=batch_sched_delay=0,default_queue_depth=10000,max_sched_time=50
MessageTimeout=100
GresTypes=gpu
PrivateData=cloud
SuspendProgram=/bin/true
ResumeProgram=/bin/true
SuspendTime=600
ResumeRate=0
ResumeTimeout=65000
ReturnToService=2
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
CONF
    [ -n "${EXTRA_CONF:-}" ] && printf '%s\n' "$EXTRA_CONF"   # more slurm.conf lines (PriorityType=...)
    /usr/bin/python3 "$here/slurm_cluster.py" "$n"
  } > "$CONF"
  slurmctld -c
  for _ in $(seq 50); do scontrol ping >/dev/null 2>&1 && break; sleep 0.2; done
  scontrol update nodename=ALL state=power_up >/dev/null
  # wait until no node is left powered down (idle~): those are tried last, whatever their weight
  for _ in $(seq 100); do sinfo -h -o %t | grep -q '~' || break; sleep 0.1; done
  echo "slurm oracle ready: $(sinfo -h -o %D -p all) nodes" >&2
}

ask() {
  local all; all=$(sinfo -h -o %D -p all)
  while IFS= read -r line || [ -n "$line" ]; do
    [ -z "$line" ] && continue
    case "$line" in \#*) continue ;; esac
    local asked=${line//[/(}
    asked=${asked//]/)}
    local out nodes verdict
    local -a args
    read -r -a args <<< "$asked"  # words without shell quoting: `-C [a|b]&c` as it stands
    out=$(cd /tmp && sbatch --test-only "-N1-$all" "${args[@]}" --wrap true < /dev/null 2>&1 || true)
    if [[ "$out" == *" on nodes "* ]]; then
      nodes=$(echo "$out" | sed -n 's/.* on nodes \([^ ]*\) .*/\1/p')  # Slurm's host list: n[001-003,010]
      verdict=ok
    else
      nodes="-"
      verdict="error: $(echo "$out" | tail -1 | sed 's/^sbatch: error: //')"
    fi
    printf '%s\t%s\t%s\n' "$line" "$nodes" "$verdict"
  done < "$1"
}

# Whether slurmctld takes each job of FILE at submit (sbatch as written: neither held nor --test-only, so
# job_allocate's node selection runs and a request no node could ever run is refused). TSV: the line and
# "accepted" or "error: " with Slurm's message; an accepted job is cancelled at once.
submit() {
  while IFS= read -r line || [ -n "$line" ]; do
    [ -z "$line" ] && continue
    case "$line" in \#*) continue ;; esac
    local -a args
    read -r -a args <<< "$line"
    local out verdict
    if out=$(cd /tmp && sbatch --parsable "${args[@]}" --wrap true < /dev/null 2>&1); then
      scancel "${out%%;*}" 2>/dev/null || true
      verdict=accepted
    else
      verdict="error: $(echo "$out" | tail -1 | sed 's/^sbatch: error: //')"
    fi
    printf '%s\t%s\n' "$line" "$verdict"
  done < "$1"
}

# Where Slurm starts each job of FILE, alone on the empty cluster: `salloc --no-shell` grants the
# allocation at once (the job then waits for its CLOUD nodes to boot, so it is cancelled and the salloc
# ended). Nodes a job has touched are preferred afterwards, so the controller starts afresh before each
# question (about 2 s). TSV: the line, the node ("-" when no allocation came within 5 s).
place() {
  local n; n=$(sinfo -h -o %D -p all)
  while IFS= read -r line || [ -n "$line" ]; do
    [ -z "$line" ] && continue
    setup "$n" 2>/dev/null
    local -a args
    read -r -a args <<< "$line"
    local out; out=$(mktemp)
    (cd /tmp && salloc --no-shell -J place "${args[@]}" > "$out" 2>&1 < /dev/null) &
    local pid=$! id="" node="-"
    for _ in $(seq 50); do
      id=$(grep -o "Granted job allocation [0-9]*" "$out" | head -1 | awk '{print $4}' || true)
      [ -n "$id" ] && break
      sleep 0.1
    done
    if [ -n "$id" ]; then
      node=$(squeue -h -j "$id" -o '%N')
      scancel "$id"
    fi
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    rm -f "$out"
    printf '%s\t%s\n' "$line" "$node"
  done < "$1"
}

# A batch released at once: the jobs of FILE submitted held (sbatch -H, in file order) on a fresh
# controller, the cluster and its queue dumped into OUT_DIR (tools/slurm-dump.sh), then all released with
# one scontrol release; after one main scheduling pass (default_queue_depth covers them all) prints
# job id, state, nodes and reason for each (TSV), as squeue reports them.
batch() {
  local n; n=$(sinfo -h -o %D -p all)
  setup "$n" 2>/dev/null
  local ids=() line
  while IFS= read -r line || [ -n "$line" ]; do
    [ -z "$line" ] && continue
    local -a args
    read -r -a args <<< "$line"
    ids+=("$(cd /tmp && sbatch -H --parsable "${args[@]}" --wrap true < /dev/null)")
  done < "$1"
  bash "$here/../../tools/slurm-dump.sh" "$2"
  scontrol release "$(IFS=,; echo "${ids[*]}")"
  # until the main pass has looked at every job. A pass is cut after max_sched_time (by default 2 s,
  # job_scheduler.c: at most MessageTimeout / 2) and the next starts again at the top: on 10,000 nodes
  # every pass was cut at the same job and ~360 of 520 were never looked at, so the pass may run 50 s.
  # Backfill (every 30 s) would start more: SCHEDULER=sched/builtin leaves the main pass alone.
  sleep 3
  for _ in $(seq 300); do
    squeue -h -t PD -o '%r' | grep -qx None || break
    sleep 1
  done
  squeue -h -o '%i	%T	%N	%r' | sort -n
}

# The priority slurmctld gives each job of FILE at submit (priority/multifactor: its InitPrio), the jobs
# submitted with --begin an hour on so they pend without running. TSV: job id, priority (squeue %Q).
prio() {
  while IFS= read -r line || [ -n "$line" ]; do
    [ -z "$line" ] && continue
    local -a args
    read -r -a args <<< "$line"
    (cd /tmp && sbatch --begin=now+3600 --parsable "${args[@]}" --wrap true < /dev/null) > /dev/null
  done < "$1"
  squeue -h -o '%i	%Q' | sort -n
}

case "${1:-}" in
  setup) setup "${2:-100}" ;;
  batch) batch "$2" "$3" ;;
  ask) ask "$2" ;;
  place) place "$2" ;;
  submit) submit "$2" ;;
  prio) prio "$2" ;;
  stop) stop ;;
  *) echo "usage: $0 setup N | ask FILE | place FILE | submit FILE | prio FILE | batch FILE OUT_DIR | stop" >&2; exit 1 ;;
esac
