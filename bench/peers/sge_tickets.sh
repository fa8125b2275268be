#!/usr/bin/env bash
# Real Grid Engine's ticket policies (issue 43 item 1: functional and override tickets, sge_priority(5),
# sched_conf(5)) on the oracle farm of sge_oracle.sh. NOT run in CI: needs root and the qmaster
# (`sge_oracle.sh setup` first).
#
#   bash bench/peers/sge_tickets.sh run SHARES JOBS OUT [WEIGHTS]
#
# SHARES: the ticket holders, one a line (`#` comments):
#   user NAME FSHARE OTICKET          a local user (made with useradd when missing) and its sge_user(5)
#   project NAME FSHARE OTICKET       a project (sge_project(5))
#   dept NAME FSHARE OTICKET ENTRY..  a userset of type DEPT (access_list(5)) with these users/@groups
# Every other department is removed first, so that the users' departments are the file's. JOBS, WEIGHTS
# and OUT as bench/peers/sge_priority.sh (which runs the jobs; `@USER options` submits as USER, `ot N`
# gives the last job override tickets, `start` lets one scheduling run start jobs first). OUT/qstat-ext.xml
# holds the tickets the qmaster gave (tickets, otickets, ftickets, stickets, department). With STREE=FILE
# the share tree is FILE (share_tree(5), nodes in depth-first order, ids their places), else none. With
# USAGE=FILE (needs a real execution daemon: SIMULATE_EXECDS off, sge_execd running, a queue on its host),
# each line `@USER [qsub options] SECONDS` runs a job burning SECONDS of wall clock as USER, and the run
# waits for them all to end, so that the users and projects have usage; WEIGHTS' scheduler lines are set
# before them (halftime 0: no decay between the dump and the scheduling run).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/sge_common.sh"

holders() {
  local kind name fshare oticket f
  f=$(mktemp)
  for d in $(qconf -sul 2>/dev/null); do
    [ "$d" = defaultdepartment ] && continue
    qconf -su "$d" | grep -q '^type.*DEPT' && qconf -dul "$d" >/dev/null 2>&1 || true
  done
  while read -r kind name fshare oticket rest; do
    case "$kind" in
      '' | \#*) continue ;;
      user)
        id "$name" >/dev/null 2>&1 || useradd -M -s /bin/sh "$name"
        printf 'name %s\noticket %s\nfshare %s\ndelete_time 0\ndefault_project NONE\n' "$name" "$oticket" "$fshare" > "$f"
        qconf -Muser "$f" >/dev/null 2>&1 || qconf -Auser "$f" >/dev/null ;;
      project)
        printf 'name %s\noticket %s\nfshare %s\nacl NONE\nxacl NONE\n' "$name" "$oticket" "$fshare" > "$f"
        qconf -Mprj "$f" >/dev/null 2>&1 || qconf -Aprj "$f" >/dev/null ;;
      dept)
        printf 'name %s\ntype DEPT\nfshare %s\noticket %s\nentries %s\n' "$name" "$fshare" "$oticket" \
          "$(echo "$rest" | tr ' ' ',')" > "$f"
        qconf -Mu "$f" >/dev/null 2>&1 || qconf -Au "$f" >/dev/null ;;
      *) echo "sge_tickets: unknown holder line: $kind $name" >&2; exit 1 ;;
    esac
  done < "$1"
  rm -f "$f"
}

usage() {  # USAGE file, weights file
  local line who secs opts
  qdel -f -u "*" >/dev/null 2>&1 || true
  if [ -n "$2" ]; then sched $(grep -v '^#' "$2"); fi
  qmod -e '*' >/dev/null 2>&1 || true
  printf '#!/bin/sh\nend=$(( $(date +%%s) + $1 ))\nwhile [ "$(date +%%s)" -lt "$end" ]; do :; done\n' > /tmp/sge-burn.sh
  chmod 755 /tmp/sge-burn.sh
  while read -r line; do
    case "$line" in '' | \#*) continue ;; esac
    who=${line%% *}; secs=${line##* }; opts=${line#"$who"}; opts=${opts%"$secs"}
    (cd /tmp && runuser -u "${who#@}" -- env SGE_ROOT="$SGE_ROOT" SGE_CELL="$SGE_CELL" \
      qsub -b y -wd /tmp -o /dev/null -e /dev/null -l lic=0 $opts /tmp/sge-burn.sh "$secs" >/dev/null)
  done < "$1"
  sleep 5
  while qstat -u '*' | grep -q sge-burn; do sleep 2; done
  sleep 5  # the last usage reports
}

case "${1:-}" in
  run)
    settings
    holders "$2"
    qconf -dstree >/dev/null 2>&1 || true
    if [ -n "${STREE:-}" ]; then qconf -Astree "$STREE" >/dev/null; qconf -sst; fi
    if [ -n "${USAGE:-}" ]; then usage "$USAGE" "${5:-}"; fi
    bash "$here/sge_priority.sh" run "$3" "$4" "${5:-}"
    cp "$2" "$4/shares.txt"
    if [ -n "${STREE:-}" ]; then cp "$STREE" "$4/share-tree.txt"; fi ;;
  *) echo "usage: $0 run SHARES JOBS OUT [WEIGHTS]" >&2; exit 1 ;;
esac
