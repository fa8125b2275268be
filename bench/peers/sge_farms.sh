#!/usr/bin/env bash
# Real Grid Engine farms for checking `--format sge` (issue 25): Son of Grid Engine 8.1.9 from Debian 12
# with simulated execution hosts builds a farm, tools/sge-dump.sh dumps it, and qselect / qsub -w v
# answer requests against it. NOT run in CI: it needs root, the qmaster (bench/peers/sge_oracle.sh
# setup installs and starts it) and edits /etc/hosts (a marked block, removed by `teardown`).
#
#   bash bench/peers/sge_oracle.sh setup          # install and start Grid Engine (once)
#   bash bench/peers/sge_farms.sh farm80          # 80 hosts, nested host groups, per-host queue values
#   bash bench/peers/sge_farms.sh farm1000        # 1,000 hosts, five queues
#   bash tools/sge-dump.sh datasets/sge/farm80    # the dump the tests read
#   bash bench/peers/sge_farms.sh ask REQUESTS > answers.tsv
#   bash bench/peers/sge_farms.sh submit JOBS     # run jobs on the farm (their accounting records)
#   bash bench/peers/sge_farms.sh teardown        # remove the farm's hosts from /etc/hosts
#
# REQUESTS: one job a line as qsub options (-l LIST, -q LIST, -pe NAME N, -soft ...). For each line the
# TSV has: the line, qselect's queue instances for its -l / -q / -pe NAME (sorted, comma-separated; "-"
# for none; "error: ..." when SGE refuses), and qsub -w v's verdict on the empty farm ("ok", "refused"
# or "error: ...").
set -euo pipefail
MARK="# colmatch sge farms"
here=$(cd "$(dirname "$0")" && pwd)

. "$here/sge_common.sh"

# Removes every queue, host group, PE and execution host but the master's own admin/submit host.
clear_farm() {
  settings
  local x
  qdel -f -u "*" >/dev/null 2>&1 || true
  for x in $(qconf -sql 2>/dev/null || true); do qconf -dq "$x" >/dev/null; done
  for x in $(qconf -shgrpl 2>/dev/null || true); do qconf -dhgrp "$x" >/dev/null 2>&1 || true; done
  for x in $(qconf -shgrpl 2>/dev/null || true); do qconf -dhgrp "$x" >/dev/null 2>&1 || true; done
  for x in $(qconf -spl 2>/dev/null || true); do qconf -dp "$x" >/dev/null; done
  for x in $(qconf -sel 2>/dev/null || true); do qconf -de "$x" >/dev/null; done
  qconf -rattr exechost complex_values NONE global >/dev/null 2>&1 || true  # -mattr refuses NONE
  sed -i "/$MARK/d" /etc/hosts
}

add_hosts_file() {  # name prefix, count: /etc/hosts lines
  local prefix=$1 n=$2 i
  for ((i = 1; i <= n; i++)); do
    printf '127.%d.%d.%d %s%04d %s\n' $((10 + i / 65536)) $(((i / 256) % 256)) $((i % 256)) "$prefix" "$i" "$MARK"
  done >> /etc/hosts
}

add_complexes() {
  local cx; cx=$(mktemp)
  qconf -sc | grep -v -E '^(arch_s|osc|os|cores|scratch|mem_c|gpu|lic|tmo|fast|speed|rack) ' > "$cx"
  cat >> "$cx" <<'EOF'
arch_s  as    STRING   ==  YES  NO   NONE  0
osc     osc   CSTRING  ==  YES  NO   NONE  0
os      os    RESTRING ==  YES  NO   NONE  0
cores   cor   INT      <=  YES  NO   0     0
scratch scr   MEMORY   <=  YES  NO   0     0
mem_c   memc  MEMORY   <=  YES  YES  0     0
gpu     gpu   INT      <=  YES  YES  0     0
lic     lic   INT      <=  YES  JOB  0     0
tmo     tmo   TIME     <=  YES  NO   0:0:0 0
fast    fast  BOOL     ==  YES  NO   0     0
speed   spd   DOUBLE   >=  YES  NO   0     0
rack    rack  STRING   ==  YES  NO   NONE  0
EOF
  qconf -Mc "$cx" >/dev/null
  rm -f "$cx"
}

add_group() {  # name members...
  local f; f=$(mktemp) name=$1; shift
  printf 'group_name %s\nhostlist %s\n' "$name" "$*" > "$f"
  qconf -Ahgrp "$f" >/dev/null
  rm -f "$f"
}

add_pe() {  # name rule
  local f; f=$(mktemp)
  printf 'pe_name %s\nslots 99999\nuser_lists NONE\nxuser_lists NONE\nstart_proc_args NONE\nstop_proc_args NONE\nallocation_rule %s\ncontrol_slaves FALSE\njob_is_first_task TRUE\nurgency_slots min\naccounting_summary FALSE\nqsort_args NONE\n' \
    "$1" "$2" > "$f"
  qconf -Ap "$f" >/dev/null
  rm -f "$f"
}

# 80 hosts h0001..h0080 in four racks; nested groups; queues with per-host and per-group values.
farm80() {
  clear_farm
  add_hosts_file h 80
  add_complexes
  local i os osc cores arch
  local oses=(rhel8 rhel9 ubuntu22) oscs=(RedHat Ubuntu) coreses=(8 16 32 64)
  for ((i = 1; i <= 80; i++)); do
    arch=x86_64; ((i > 60)) && arch=aarch64
    local rack=$(((i - 1) / 20 + 1)) fast=false
    ((i % 5 == 0)) && fast=true
    add_host "$(printf h%04d "$i")" \
      "arch_s=$arch,osc=${oscs[i % 2]},os=${oses[i % 3]},cores=${coreses[i % 4]},scratch=$((100 * (1 + i % 3)))G,mem_c=$((64 * (1 + i % 2)))G,speed=1.$((i % 10)),fast=$fast,rack=rack$rack"
  done
  qconf -mattr exechost complex_values lic=10 global >/dev/null
  for r in 1 2 3 4; do add_group "@rack$r" $(for ((i = (r - 1) * 20 + 1; i <= r * 20; i++)); do printf 'h%04d ' "$i"; done); done
  add_group @gpuextra h0061 h0062
  add_group @gpu @gpuextra h0075 h0076 h0077 h0078 h0079 h0080
  add_group @cluster @rack1 @rack2 @rack3 @rack4
  add_group @even $(for ((i = 2; i <= 80; i += 2)); do printf 'h%04d ' "$i"; done)
  add_pe mpi '$fill_up'
  add_pe smp '$pe_slots'
  add_queue all.q <<'EOF'
hostlist @cluster
seq_no 10
slots 8,[@rack4=16],[h0001=2]
pe_list mpi smp
complex_values NONE,[@rack2=tmo=3600],[h0005=tmo=7200]
EOF
  add_queue short.q <<'EOF'
hostlist @rack1 @rack2
seq_no 5
slots 4
h_rt 1:00:00
s_rt 0:50:00
h_vmem 8G,[@rack2=16G]
pe_list smp
EOF
  add_queue gpu.q <<'EOF'
hostlist @gpu
seq_no 1
slots 2
complex_values gpu=2,[h0080=gpu=4]
pe_list smp
qtype BATCH
EOF
  add_queue inter.q <<'EOF'
hostlist h0010 h0011
seq_no 20
slots 1
qtype INTERACTIVE
EOF
  add_queue even.q <<'EOF'
hostlist @even
seq_no 30
slots 2
calendar NONE
rerun TRUE
EOF
  qmod -d short.q@h0003 >/dev/null
  echo "farm80 ready: $(qselect | wc -l) queue instances" >&2
}

# 1,000 hosts n0001..n1000; five queues over ranges of them, per-host slots.
farm1000() {
  clear_farm
  add_hosts_file n 1000
  add_complexes
  local i oses=(rhel8 rhel9 ubuntu22 sles15) coreses=(16 32 64 128)
  for ((i = 1; i <= 1000; i++)); do
    add_host "$(printf n%04d "$i")" \
      "arch_s=$([ $((i % 7)) = 0 ] && echo aarch64 || echo x86_64),osc=RedHat,os=${oses[i % 4]},cores=${coreses[i % 4]},scratch=$((50 * (1 + i % 5)))G,mem_c=$((96 * (1 + i % 3)))G,speed=$((i % 3)).5,rack=rack$(((i - 1) / 40 + 1))"
  done
  for r in $(seq 1 25); do add_group "@r$r" $(for ((i = (r - 1) * 40 + 1; i <= r * 40; i++)); do printf 'n%04d ' "$i"; done); done
  add_group @west $(for r in $(seq 1 12); do printf '@r%d ' "$r"; done)
  add_group @east $(for r in $(seq 13 25); do printf '@r%d ' "$r"; done)
  add_group @gpu n0991 n0992 n0993 n0994 n0995 n0996 n0997 n0998 n0999 n1000
  add_pe mpi '$fill_up'
  add_pe smp '$pe_slots'
  add_queue all.q <<'EOF'
hostlist @west @east
seq_no 10
slots 16,[@r1=32],[n0500=4]
pe_list mpi smp
EOF
  add_queue long.q <<'EOF'
hostlist @west
seq_no 20
slots 8
h_rt 72:00:00
pe_list mpi
EOF
  add_queue short.q <<'EOF'
hostlist @east
seq_no 5
slots 4
h_rt 0:30:00
EOF
  add_queue gpu.q <<'EOF'
hostlist @gpu
seq_no 1
slots 4
complex_values gpu=4,[n1000=gpu=8]
pe_list smp
EOF
  add_queue mem.q <<'EOF'
hostlist @r3 @r4
seq_no 15
slots 2
h_vmem 512G,[@r4=1T]
EOF
  echo "farm1000 ready: $(qselect | wc -l) queue instances" >&2
}

ask() {
  settings
  while IFS= read -r line || [ -n "$line" ]; do
    [ -z "$line" ] && continue
    case "$line" in \#*) continue ;; esac
    # qselect takes -l, -q and -pe NAME (no slot count, no soft requests)
    local -a words sel_args=()
    read -r -a words <<< "$line"
    local i=0 soft=0
    while ((i < ${#words[@]})); do
      case "${words[i]}" in
        -soft) soft=1 ;;
        -hard) soft=0 ;;
        -l | -q) ((soft == 0)) && sel_args+=("${words[i]}" "${words[i + 1]}"); i=$((i + 1)) ;;
        -pe) sel_args+=(-pe "${words[i + 1]}"); i=$((i + 2)) ;;
      esac
      i=$((i + 1))
    done
    local sel out
    if out=$(qselect "${sel_args[@]}" 2>&1); then
      sel=$(echo "$out" | sort | tr '\n' ',' | sed 's/,$//')
    elif [ -z "$out" ]; then
      sel="-"
    else
      sel="error: $(echo "$out" | head -1)"
    fi
    out=$(cd /tmp && qsub -w v -b y $line /bin/true 2>&1 || true)
    case "$out" in
      *"found suitable queue"*) out=ok ;;
      *"no suitable queues"*) out=refused ;;
      *) out="error: $(echo "$out" | head -1)" ;;
    esac
    printf '%s\t%s\t%s\n' "$line" "$sel" "$out"
  done < "$1"
}

# Submits the jobs of FILE (one a line: RUNTIME, a tab, qsub options). Under SIMULATE_EXECDS the qmaster
# runs a job for as many seconds as its first argument says and then writes its accounting record, so
# `sleep RUNTIME` jobs leave an accounting file of real submission, start and end times.
submit() {
  settings
  local f; f=$(mktemp)
  printf '#!/bin/sh\nsed -i -e "s/^schedule_interval.*/schedule_interval 0:0:2/" -e "s/^queue_sort_method.*/queue_sort_method seqno/" "$1"\n' > "$f"
  chmod +x "$f"
  EDITOR="$f" qconf -msconf >/dev/null 2>&1 || true
  rm -f "$f"
  local runtime opts
  while IFS=$'\t' read -r runtime opts; do
    [ -z "$runtime" ] && continue
    (cd /tmp && qsub -b y -o /dev/null -e /dev/null $opts /bin/sleep "$runtime" >/dev/null 2>&1) || echo "refused: $opts" >&2
  done < "$1"
}

case "${1:-}" in
  farm80) farm80 ;;
  submit) submit "$2" ;;
  farm1000) farm1000 ;;
  ask) ask "$2" ;;
  teardown) clear_farm ;;
  *) echo "usage: $0 farm80 | farm1000 | ask FILE | submit FILE | teardown" >&2; exit 1 ;;
esac
