#!/usr/bin/env bash
# Writes what a Slurm controller prints about its cluster into OUT_DIR, for
#   colmatch match --format slurm --dump OUT_DIR --jobs jobs.txt --out result/
# Run it on a login node (any host where scontrol reaches slurmctld). It only reads.
#
#   bash tools/slurm-dump.sh OUT_DIR
#
# Files (loaders/slurm.hpp reads the first two):
#   scontrol-node.txt        scontrol show node -o       (one node a line)
#   scontrol-partition.txt   scontrol show partition -o  (one partition a line)
#   scontrol-config.txt      scontrol show config        (kept with the dump: SelectTypeParameters, DefMemPer*)
#   squeue.json              squeue --json               (the jobs: pending ones are matched)
#   scontrol-job.txt         scontrol show job -o        (the same jobs as text: read when squeue.json is not there)
#   sshare.txt               sshare -a -P -l             (the associations' shares, for fair share; only with slurmdbd)
#   sacctmgr-qos.txt         sacctmgr -P show qos format=Name,Priority,UsageFactor  (the QOS priorities and usage factors; only with slurmdbd)
#   sacctmgr-assoc.txt       sacctmgr -P show assoc format=Account,User,Partition,Priority  (the associations'
#                            priorities, inherited as slurmdbd gives them; only with slurmdbd)
# OUT_DIR must be new, empty, or an earlier dump of this script (it holds .colmatch-dump): anything
# else is refused, exit 1, nothing written.
set -euo pipefail
out=${1:?usage: slurm-dump.sh OUT_DIR}
command -v scontrol >/dev/null || { echo "slurm-dump: scontrol not found" >&2; exit 1; }
. "$(dirname "$0")/dump-common.sh"
dump_check_out "$out" slurm-dump
tmp=$(mktemp -d "${out%/}.tmp.XXXXXX")
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
scontrol show node -o > "$tmp/scontrol-node.txt"
scontrol show partition -o > "$tmp/scontrol-partition.txt"
scontrol show config > "$tmp/scontrol-config.txt"
squeue --json > "$tmp/squeue.json" 2>/dev/null || true
scontrol show job -o > "$tmp/scontrol-job.txt" 2>/dev/null || true
if ! sshare -a -P -l > "$tmp/sshare.txt" 2>/dev/null || [ ! -s "$tmp/sshare.txt" ]; then rm -f "$tmp/sshare.txt"; fi
if ! sacctmgr -P show qos format=Name,Priority,UsageFactor > "$tmp/sacctmgr-qos.txt" 2>/dev/null || [ ! -s "$tmp/sacctmgr-qos.txt" ]; then
  rm -f "$tmp/sacctmgr-qos.txt"
fi
if ! sacctmgr -P show assoc format=Account,User,Partition,Priority > "$tmp/sacctmgr-assoc.txt" 2>/dev/null ||
  [ ! -s "$tmp/sacctmgr-assoc.txt" ]; then
  rm -f "$tmp/sacctmgr-assoc.txt"
fi
dump_publish "$tmp" "$out" slurm-dump
trap - EXIT
echo "slurm-dump: $(wc -l < "$out/scontrol-node.txt") nodes, $(wc -l < "$out/scontrol-partition.txt") partitions -> $out" >&2
