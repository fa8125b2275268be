#!/usr/bin/env bash
# Real Slurm (22.05.8 from Debian 12) that runs jobs: one slurmctld and one slurmd per virtual node on this
# host (Debian builds Slurm with --enable-multiple-slurmd), times back through jobcomp/filetxt
# (../shared/references/slurm-run.md). The reference for Slurm's timeline (issue 48). NOT run in CI: it needs
# root, and a workload runs in real time.
#
#   bash bench/peers/slurm_run.sh setup NODES CPUS MEM_MB [PRIORITY]   # write the config, start, wait for nodes
#   bash bench/peers/slurm_run.sh run WORKLOAD OUT_DIR                  # submit, wait for every job, record
#   bash bench/peers/slurm_run.sh stop
#
# ACCOUNTS (environment, `name:shares[:parent],...`): accounting through slurmdbd and a MariaDB of its own (fair
# share needs associations; slurm-run.md), each account made with that Fairshare= (under that parent account,
# listed before it) and user root in each.
# QOS (environment, with ACCOUNTS, `name:priority,...`): those QOS made, and root's associations allowed them.
# PRIORITY: basic (FIFO, the default) or multifactor. SCHED_PARAMS (environment) comes first in
# SchedulerParameters (before batch_sched_delay=0,bf_interval=10: slurmctld reads an option's first); EXTRA_CONF (environment, lines) to
# slurm.conf (e.g. PriorityWeightAge=1000 and PriorityCalcPeriod=1 on lines of their own).
# WORKLOAD: one job a line, `OFFSET RUNTIME sbatch-options...`: submitted OFFSET seconds after the first,
# running `sleep RUNTIME`; `{N}` in the options is the Slurm id of the workload's Nth job (--dependency=afterok:{2}). Keep RUNTIME below the job's -t (whole minutes) so ends are exact.
# OUT_DIR gets: slurm.conf, the dump of the cluster (tools/slurm-dump.sh: dump/), jobcomp.txt (a line a
# finished job), sacct.txt (the same records as `sacct -a -P` prints them: what `colmatch simulate --format
# slurm --accounting` reads), and workload.txt (the workload as submitted, with Slurm's job ids); under
# multifactor sprio.tsv (sprio every 10 s, slurm_sprio.py) and init-priority.tsv (each job's InitPrio from
# slurmctld's log); with ACCOUNTS sacct-dbd.txt (Slurm's own sacct) and sshare.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
DIR=${SLURM_RUN_DIR:-/tmp/colmatch-slurm-run}
CONF=$DIR/slurm.conf
export SLURM_CONF=$CONF

stop() {
  scancel --user=root >/dev/null 2>&1 || true
  for f in "$DIR"/run/*.pid; do
    [ -f "$f" ] || continue
    kill "$(cat "$f")" 2>/dev/null || true
  done
  pkill -f "slurmd -D -N" 2>/dev/null || true
  pkill -f "slurmctld -D -c -f $CONF" 2>/dev/null || true
  pkill -f "slurmdbd -D" 2>/dev/null || true
  pkill -f "mariadbd --datadir=$DIR/db" 2>/dev/null || true
  sleep 1
}

# MariaDB on 127.0.0.1:7901 (no grants: nothing else reaches it), slurmdbd on 7902, the cluster registered.
accounting() {
  mkdir -p "$DIR/db"
  mariadb-install-db --datadir="$DIR/db" --user=root --auth-root-authentication-method=normal > "$DIR/log/db-install.out" 2>&1
  setsid mariadbd --datadir="$DIR/db" --user=root --skip-grant-tables --bind-address=127.0.0.1 --port=7901 \
    --socket="$DIR/run/mariadb.sock" --pid-file="$DIR/run/mariadb.pid" > "$DIR/log/mariadb.out" 2>&1 < /dev/null &
  for _ in $(seq 100); do mariadb-admin --socket="$DIR/run/mariadb.sock" ping >/dev/null 2>&1 && break; sleep 0.2; done
  cat > "$DIR/slurmdbd.conf" <<DBD
AuthType=auth/none
DbdHost=localhost
DbdPort=7902
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=7901
StorageUser=root
StorageLoc=colmatch_acct
PidFile=$DIR/run/slurmdbd.pid
LogFile=$DIR/log/slurmdbd.log
DBD
  chmod 600 "$DIR/slurmdbd.conf"
  SLURM_CONF=$CONF setsid slurmdbd -D > "$DIR/log/slurmdbd.out" 2>&1 < /dev/null &
  for _ in $(seq 150); do sacctmgr -n list cluster >/dev/null 2>&1 && break; sleep 0.2; done
  sacctmgr -i add cluster colrun >/dev/null
  local spec name shares parent
  for spec in ${ACCOUNTS//,/ }; do
    IFS=: read -r name shares parent <<< "$spec"
    sacctmgr -i add account "$name" Cluster=colrun Fairshare="${shares:-1}" ${parent:+Parent="$parent"} >/dev/null
    sacctmgr -i add user root Account="$name" Cluster=colrun >/dev/null
  done
  local q names=""
  for spec in ${QOS:+${QOS//,/ }}; do
    q=${spec%%:*}
    sacctmgr -i add qos "$q" Priority="${spec#*:}" >/dev/null
    names=${names:+$names,}$q
  done
  if [ -n "$names" ]; then sacctmgr -i modify user root set qos+="$names" >/dev/null; fi
}

setup() {
  local n=${1:?nodes} cpus=${2:?cpus per node} mem=${3:?memory per node, MB} prio=${4:-basic}
  stop
  rm -rf "$DIR" && mkdir -p "$DIR"/{state,spool,run,log}
  local host last; host=$(hostname)
  last=$(printf 'n%02d' "$n")
  # slurm.conf first: sacctmgr reads it to find slurmdbd
  {
    cat <<CONF
ClusterName=colrun
SlurmctldHost=$host
SlurmctldPort=7817
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/%n
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.%n.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.%n.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc=$DIR/jobcomp.txt
MpiDefault=none
ReturnToService=2
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
SchedulerParameters=${SCHED_PARAMS:+$SCHED_PARAMS,}batch_sched_delay=0,bf_interval=10
PriorityType=priority/$prio
MessageTimeout=30
NodeName=n[01-$(printf '%02d' "$n")] NodeHostname=$host NodeAddr=127.0.0.1 Port=7820-$((7819 + n)) CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=all Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
    if [ -n "${EXTRA_CONF:-}" ]; then printf '%s\n' "$EXTRA_CONF"; fi
    if [ -n "${ACCOUNTS:-}" ]; then
      printf 'AccountingStorageType=accounting_storage/slurmdbd\nAccountingStorageHost=localhost\n'
      printf 'AccountingStoragePort=7902\nAccountingStorageEnforce=associations\n'
    fi
  } > "$CONF"
  if [ -n "${ACCOUNTS:-}" ]; then accounting; fi
  setsid slurmctld -D -c -f "$CONF" > "$DIR/log/slurmctld.out" 2>&1 < /dev/null &
  for _ in $(seq 100); do scontrol ping >/dev/null 2>&1 && break; sleep 0.2; done
  for i in $(seq 1 "$n"); do
    setsid slurmd -D -N "$(printf 'n%02d' "$i")" -f "$CONF" > "$DIR/log/slurmd.$i.out" 2>&1 < /dev/null &
  done
  for _ in $(seq 300); do
    [ "$(sinfo -h -o %t -n "n01,$last" | sort -u)" = "idle" ] && [ "$(sinfo -h -t idle -o %D)" = "$n" ] && break
    sleep 0.5
  done
  echo "slurm run: $(sinfo -h -t idle -o %D) of $n nodes idle" >&2
  sleep "${SETTLE:-20}"  # a burst right after start-up can leave the newest nodes unused (slurm-run.md)
}

run() {
  local workload=${1:?workload} out=${2:?out dir}
  mkdir -p "$out"
  cp "$CONF" "$out/slurm.conf"
  : > "$out/workload.txt"
  local t0; t0=$(date +%s.%N)
  local sampler=""
  local -a ids=()
  if grep -q '^PriorityType=priority/multifactor' "$CONF"; then  # sprio every 10 s while the run lasts
    (while :; do echo "## $(date +%s)"; sprio -l -h 2>/dev/null; sleep 10; done > "$out/sprio-raw.txt") &
    sampler=$!
  fi
  while read -r offset runtime rest || [ -n "${offset:-}" ]; do
    [ -z "${offset:-}" ] && continue
    case "$offset" in \#*) continue ;; esac
    local now; now=$(date +%s.%N)
    local wait; wait=$(echo "$t0 + $offset - $now" | bc -l)
    if [ "$(echo "$wait > 0" | bc -l)" = 1 ]; then sleep "$wait"; fi
    # {N} in the options: the Slurm id of the workload's Nth job (--dependency=afterok:{3})
    local n; for n in $(grep -o '{[0-9]*}' <<< "$rest" | tr -d '{}' | sort -u); do
      rest=${rest//\{$n\}/${ids[$((n - 1))]}}
    done
    local -a args
    read -r -a args <<< "$rest"
    local id; id=$(cd /tmp && sbatch --parsable "${args[@]}" --wrap "sleep $runtime" < /dev/null)
    ids+=("$id")
    printf '%s\t%s\t%s\t%s\n' "$id" "$offset" "$runtime" "$rest" >> "$out/workload.txt"
  done < "$workload"
  # every job ended: none left in the queue
  while [ -n "$(squeue -h -o %i)" ]; do sleep 2; done
  sleep 2
  if [ -n "$sampler" ]; then
    kill "$sampler" 2>/dev/null || true
    /usr/bin/python3 "$here/slurm_sprio.py" "$out/sprio-raw.txt" > "$out/sprio.tsv"
    grep -o 'JobId=[0-9]* InitPrio=[0-9]*' "$DIR/log/slurmctld.log" | sed 's/JobId=//; s/ InitPrio=/\t/' \
      > "$out/init-priority.tsv"
  fi
  cp "$DIR/jobcomp.txt" "$out/jobcomp.txt"
  rm -rf "$out/dump"
  bash "$here/../../tools/slurm-dump.sh" "$out/dump" 2>/dev/null
  /usr/bin/python3 "$here/slurm_jobcomp.py" "$out/jobcomp.txt" "$out/workload.txt" > "$out/sacct.txt"
  # with slurmdbd (setup's ACCOUNTS): Slurm's own sacct, and the associations' shares and usage at the end
  if grep -q '^AccountingStorageType=accounting_storage/slurmdbd' "$CONF"; then
    sleep 3
    sacct -a -P -X -o JobIDRaw,Submit,Eligible,Start,End,Timelimit,NNodes,NCPUS,ReqMem,Constraints,ReqTRES,Partition,User,Account,QOS,State \
      > "$out/sacct-dbd.txt"
    sshare -a -P -l > "$out/sshare.txt"
  fi
  echo "slurm run: $(wc -l < "$out/jobcomp.txt") jobs recorded in $out" >&2
}

case "${1:-}" in
  setup) shift; setup "$@" ;;
  run) run "$2" "$3" ;;
  stop) stop ;;
  *) echo "usage: $0 setup NODES CPUS MEM_MB [basic|multifactor] | run WORKLOAD OUT_DIR | stop" >&2; exit 1 ;;
esac
