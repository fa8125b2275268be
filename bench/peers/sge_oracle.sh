#!/usr/bin/env bash
# Real Grid Engine (Son of Grid Engine 8.1.9 from Debian 12) as an oracle for colmatch's Grid Engine
# request semantics (issue 8). NOT run in CI: it needs root, installs gridengine-master/-client, starts
# sge_qmaster by hand and edits /etc/hosts (a marked block, removed by `teardown`).
#
#   bash bench/peers/sge_oracle.sh setup                 # install, start, configure the farm below
#   bash bench/peers/sge_oracle.sh ask requests.txt      # one request per line -> TSV on stdout
#   bash bench/peers/sge_oracle.sh ask-global requests_global.txt   # the same with global values
#   bash bench/peers/sge_oracle.sh teardown              # stop the qmaster, remove the hosts block
#
# The farm (the same one tests/engine/match/test_sge_semantics.cpp builds for colmatch): four simulated exec
# hosts in one queue all.q, with the complexes and values below. For each request the TSV has:
# request, qselect -l's queue instances (sorted, comma-separated; "-" for none; "error: ..." when SGE
# refuses the request), and qsub -w v's verdict on an empty cluster ("ok" or "refused").
# The recorded answers are written into the tests; see ../shared/references/grid-engine-peer.md.
set -euo pipefail
HOSTS=(node0001 node0002 node0003 node0004)
MARK="# colmatch sge oracle"

. "$(cd "$(dirname "$0")" && pwd)/sge_common.sh"

setup() {
  if ! dpkg-query -W -f='${Status}' gridengine-master 2>/dev/null | grep -q "install ok installed"; then
    local h; h=$(hostname)
    for p in gridengine-common gridengine-client gridengine-master; do
      printf '%s shared/gridenginemaster string %s\n%s shared/gridenginecell string default\n%s shared/gridengineconfig boolean true\n' \
        "$p" "$h" "$p" "$p"
    done | debconf-set-selections
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gridengine-master gridengine-client >/dev/null
  fi
  settings
  # commlib refuses clients when 127.0.0.1 resolves back to localhost instead of the host name
  echo "$(hostname) localhost" > "$SGE_ROOT/$SGE_CELL/common/host_aliases"
  if ! grep -q "$MARK" /etc/hosts; then
    local i=10
    for h in "${HOSTS[@]}"; do echo "127.0.1.$i $h $MARK" >> /etc/hosts; i=$((i + 1)); done
  fi
  restart
  qconf -as "$(hostname)" >/dev/null 2>&1 || true
  # simulated exec hosts: hosts without an execution daemon
  local editor; editor=$(mktemp)
  # (and root may submit: qsub -w v refuses user ids under min_uid before it verifies)
  printf '#!/bin/sh\nsed -i -e "s/^qmaster_params.*/qmaster_params SIMULATE_EXECDS=true/" -e "s/^min_uid.*/min_uid 0/" -e "s/^min_gid.*/min_gid 0/" "$1"\n' > "$editor"
  chmod +x "$editor"
  EDITOR="$editor" qconf -mconf >/dev/null
  rm -f "$editor"
  restart
  # complexes: SGE's own plus ours (name shortcut type relop requestable consumable default urgency)
  local cx; cx=$(mktemp)
  qconf -sc | grep -v -E '^(arch_s|osc|os|fsrv|scratch|cores|lic|tmo|frc) ' > "$cx"
  cat >> "$cx" <<'EOF'
arch_s  as   STRING   ==  YES  NO   NONE  0
osc     osc  CSTRING  ==  YES  NO   NONE  0
os      os   RESTRING ==  YES  NO   NONE  0
fsrv    fsrv HOST     ==  YES  NO   NONE  0
scratch scr  MEMORY   <=  YES  NO   0     0
cores   cor  INT      <=  YES  NO   0     0
lic     lic  INT      <=  YES  YES  1     0
tmo     tmo  TIME     <=  YES  NO   0:0:0 0
frc     frc  INT      <=  FORCED NO 0     0
EOF
  qconf -Mc "$cx" >/dev/null
  rm -f "$cx"
  local values=(
    "arch_s=x86_64,osc=RedHat,os=rhel7,fsrv=node0001,scratch=1G,cores=16,lic=2,tmo=3600"
    "arch_s=aarch64,osc=redhat8,os=rhel8,fsrv=node0003,scratch=2G,cores=32,tmo=7200"
    "arch_s=x86,osc=Ubuntu,os=ubuntu22,fsrv=node0004,scratch=512M,cores=8,lic=1"
    "arch_s=sparc,osc=SUSE,os=sles15,cores=4,frc=1"
  )
  qconf -dq all.q >/dev/null 2>&1 || true  # before its hosts: a host in a queue cannot be deleted
  for i in "${!HOSTS[@]}"; do
    qconf -de "${HOSTS[$i]}" >/dev/null 2>&1 || true
    add_host "${HOSTS[$i]}" "${values[$i]}"
  done
  # the queue: every host, no PEs, no load thresholds
  add_queue all.q <<EOF
hostlist ${HOSTS[*]}
slots 4
EOF
  qselect >/dev/null
  echo "sge oracle ready: $(qselect | sort | tr '\n' ' ')" >&2
}

restart() {
  settings
  local pidf=/var/spool/gridengine/qmaster/qmaster.pid
  if [ -f "$pidf" ] && kill -0 "$(cat "$pidf")" 2>/dev/null; then
    kill "$(cat "$pidf")"
    while kill -0 "$(cat "$pidf")" 2>/dev/null; do sleep 0.2; done
  fi
  /usr/sbin/sge_qmaster
  for _ in $(seq 50); do qconf -sh >/dev/null 2>&1 && return; sleep 0.2; done
  echo "sge_qmaster did not come up" >&2
  exit 1
}

ask() {
  settings
  while IFS= read -r req || [ -n "$req" ]; do
    [ -z "$req" ] && continue
    case "$req" in \#*) continue ;; esac
    local sel out
    if out=$(qselect -l "$req" 2>&1); then
      sel=$(echo "$out" | sort | tr '\n' ',' | sed 's/,$//')
    elif [ -z "$out" ]; then
      sel="-"
    else
      sel="error: $(echo "$out" | head -1)"
    fi
    out=$(cd /tmp && qsub -w v -b y -l "$req" /bin/true 2>&1 || true)
    case "$out" in
      *"found suitable queue"*) out=ok ;;
      *"no suitable queues"*) out=refused ;;
      *) out="error: $(echo "$out" | head -1)" ;;
    esac
    printf '%s\t%s\t%s\n' "$req" "$sel" "$out"
  done < "$1"
}

# Class 9: the same farm with values on the global level too (cores=8, arch_s=x86_64, under host values
# that are larger or different): SGE accepts them and checks every level.
ask_global() {
  settings
  qconf -mattr exechost complex_values cores=8,arch_s=x86_64 global >/dev/null 2>&1
  ask "$1"
  qconf -dattr exechost complex_values cores=8,arch_s=x86_64 global >/dev/null 2>&1 || true
}

teardown() {
  settings
  local pidf=/var/spool/gridengine/qmaster/qmaster.pid
  if [ -f "$pidf" ] && kill "$(cat "$pidf")" 2>/dev/null; then  # it shuts down in a few seconds
    while kill -0 "$(cat "$pidf")" 2>/dev/null; do sleep 0.2; done
  fi
  sed -i "/$MARK/d" /etc/hosts
}

case "${1:-}" in
  setup) setup ;;
  ask) ask "$2" ;;
  ask-global) ask_global "$2" ;;
  teardown) teardown ;;
  *) echo "usage: $0 setup | ask FILE | ask-global FILE | teardown" >&2; exit 1 ;;
esac
