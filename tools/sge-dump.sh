#!/usr/bin/env bash
# Writes what a Grid Engine master prints about its farm into OUT_DIR, for
#   colmatch match --format sge --dump OUT_DIR --out result/
# Run it on the master (or any submit host with the admin's view) with Grid Engine's settings loaded
# (`. $SGE_ROOT/$SGE_CELL/common/settings.sh`). It only reads: qconf -s*, qstat.
#
#   bash tools/sge-dump.sh OUT_DIR [--no-jobs]
#
# Files (loaders/sge.hpp reads them; one per command, objects of one kind one after another):
#   dump-time.txt qconf-sc.txt qconf-sconf-global.txt qconf-ssconf.txt qconf-sel.txt qconf-se.txt (global first) qconf-shgrpl.txt
#   qconf-shgrp.txt qconf-sql.txt qconf-sq.txt qconf-spl.txt qconf-sp.txt qhost-F.xml qstat-f.xml qselect.txt
#   qconf-suserl.txt qconf-suser.txt qconf-sprjl.txt qconf-sprj.txt qconf-sul.txt qconf-su.txt qconf-sstree.txt sge-share-mon.txt (users, projects
#   and user sets with their functional shares and override tickets: the ticket policies)
#   qstat-r.xml qstat-j.xml (jobs; not with --no-jobs)
# Times are printed in UTC (TZ=UTC), which is how colmatch reads qstat's local times.
# OUT_DIR must be new, empty, or an earlier dump of this script (it holds .colmatch-dump): anything
# else is refused, exit 1, nothing written.
set -euo pipefail
out=${1:?usage: sge-dump.sh OUT_DIR [--no-jobs]}
jobs=1
[ "${2:-}" = "--no-jobs" ] && jobs=0
command -v qconf >/dev/null || { echo "sge-dump: qconf not found: load \$SGE_ROOT/\$SGE_CELL/common/settings.sh" >&2; exit 1; }
export TZ=UTC
. "$(dirname "$0")/dump-common.sh"
dump_check_out "$out" sge-dump
tmp=$(mktemp -d "${out%/}.tmp.XXXXXX")
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT

# the list commands print a message instead of an empty list; keep only names
names() { "$@" 2>/dev/null | grep -v -E '^(no .* defined|.* does not exist)$' || true; }

date +%s > "$tmp/dump-time.txt"  # when: the waiting-time and deadline terms of the job priority
qconf -sc > "$tmp/qconf-sc.txt"
qconf -sconf global > "$tmp/qconf-sconf-global.txt"
qconf -ssconf > "$tmp/qconf-ssconf.txt"
names qconf -sel > "$tmp/qconf-sel.txt"
# `qconf -se` shows one host a call (about 60 ms, seconds on a loaded master): 16 calls at a time, each
# into its own file, put together in qconf -sel's order (208 hosts: 6.5 minutes one by one)
each() {  # qconf option, list file -> the records in the list's order on stdout; a failed call fails
  local opt=$1 list=$2 d; d=$(mktemp -d "$tmp/each.XXXXXX")
  { grep -v '^$' "$list" || true; } | awk '{print NR "\t" $0}' |
    xargs -r -P 16 -L 1 sh -c 'qconf "$0" "$3" > "$1/$(printf %08d "$2")"' "$opt" "$d" ||
    { echo "sge-dump: qconf $opt failed for an object of $list" >&2; exit 1; }
  cat "$d"/* 2>/dev/null || true
  rm -rf "$d"
}
{ qconf -se global; each -se "$tmp/qconf-sel.txt"; } > "$tmp/qconf-se.txt"
names qconf -shgrpl > "$tmp/qconf-shgrpl.txt"
each -shgrp "$tmp/qconf-shgrpl.txt" > "$tmp/qconf-shgrp.txt"
names qconf -sql > "$tmp/qconf-sql.txt"
while read -r q; do [ -n "$q" ] && qconf -sq "$q"; done < "$tmp/qconf-sql.txt" > "$tmp/qconf-sq.txt"
names qconf -spl > "$tmp/qconf-spl.txt"
while read -r p; do [ -n "$p" ] && qconf -sp "$p"; done < "$tmp/qconf-spl.txt" > "$tmp/qconf-sp.txt"
# the ticket policies' objects (sge_user(5), sge_project(5), access_list(5): fshare, oticket, DEPT entries)
names qconf -suserl > "$tmp/qconf-suserl.txt"
each -suser "$tmp/qconf-suserl.txt" > "$tmp/qconf-suser.txt"
names qconf -sprjl > "$tmp/qconf-sprjl.txt"
each -sprj "$tmp/qconf-sprjl.txt" > "$tmp/qconf-sprj.txt"
names qconf -sul > "$tmp/qconf-sul.txt"
each -su "$tmp/qconf-sul.txt" > "$tmp/qconf-su.txt"
# the share tree (share_tree(5)); "no sharetree element" when there is none; with its nodes' usage as the
# scheduler combines it (sge_share_mon, one round with its header; nothing when the tool is not found)
{ qconf -sstree 2>&1 || true; } > "$tmp/qconf-sstree.txt"
smon=$(command -v sge_share_mon || true)
if [ -z "$smon" ] && [ -n "${SGE_ROOT:-}" ] && [ -x "$SGE_ROOT/util/arch" ]; then
  smon="$SGE_ROOT/utilbin/$("$SGE_ROOT/util/arch")/sge_share_mon"
fi
if [ -n "$smon" ] && [ -x "$smon" ] && ! grep -q '^no sharetree' "$tmp/qconf-sstree.txt"; then
  "$smon" -c 1 -h > "$tmp/sge-share-mon.txt" 2>/dev/null || rm -f "$tmp/sge-share-mon.txt"
fi
qhost -F -xml > "$tmp/qhost-F.xml"
qstat -f -xml > "$tmp/qstat-f.xml"
# every queue instance in the qmaster's own order (Grid Engine's order among instances of equal seq_no and
# load); nothing when there is no queue
{ qselect 2>/dev/null || true; } | grep '@' > "$tmp/qselect.txt" || true
if [ "$jobs" = 1 ]; then
  qstat -u '*' -r -xml > "$tmp/qstat-r.xml"
  # every job's details (priority, group, project); qstat -j prints nothing useful when there is no job
  if grep -q '<JB_job_number>' "$tmp/qstat-r.xml"; then qstat -j '*' -xml > "$tmp/qstat-j.xml" 2>/dev/null || true; fi
fi
dump_publish "$tmp" "$out" sge-dump
trap - EXIT
echo "sge-dump: $(wc -l < "$out/qconf-sel.txt") execution hosts, $(wc -l < "$out/qconf-sql.txt") queues -> $out" >&2
