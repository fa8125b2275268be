#!/usr/bin/env bash
# Slurm's main scheduling pass against colmatch's, timed on the same cluster and queue (issue 46). NOT run in
# CI: it needs root and starts real slurmctld 22.05 (bench/peers/slurm_oracle.sh, sched/builtin: the main pass
# alone, every node a CLOUD node so no slurmd is needed).
#
#   bash bench/peers/slurm_main_pass_speed.sh NODES JOBS SEED OUT [ROUNDS]
#
# 1. A fresh controller with NODES nodes (slurm_cluster.py) is dumped while its queue is empty (OUT/dump,
#    tools/slurm-dump.sh), then JOBS lines of slurm_requests.py's batch mix (seed SEED, OUT/jobs) are submitted
#    held, in file order (OUT/ids.tsv: line number, which is colmatch's job id for the line, and Slurm's id).
# 2. sdiag's counters are reset, every job is released with one `scontrol release`, and the controller is left
#    until no job is pending without a reason (its main pass has looked at each; at most 20 minutes). sdiag's
#    "Main schedule statistics" (microseconds: last, max and mean cycle, cycles) go to OUT/sdiag.txt, squeue's
#    outcome (id, state, nodes, reason) to OUT/slurm.tsv.
# 3. `colmatch match --format slurm --dump OUT/dump --jobs OUT/jobs` runs ROUNDS times (default 3): the fastest
#    whole command (wall clock, load included) and its summary's match_total.
# 4. slurm_main_pass_compare.py prints one line: nodes, jobs, Slurm's max and mean cycle, colmatch's
#    match_total and whole command, the ratios, and the job-by-job agreement (started on the same nodes,
#    pending in both, different); OUT/compare.txt keeps it with the jobs that differ.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
nodes=${1:?nodes} jobs=${2:?jobs} seed=${3:?seed} out=${4:?output folder} rounds=${5:-3}
colmatch=${COLMATCH:-$root/build/release/tools/colmatch}
[ -x "$colmatch" ] || { echo "no colmatch at $colmatch (COLMATCH=...)" >&2; exit 1; }
if [ -e "$out" ] && [ -n "$(ls -A "$out")" ]; then echo "$out is not empty" >&2; exit 1; fi
mkdir -p "$out"

# (MaxJobCount: by default 10,000 records, past which sbatch waits and retries for ever)
SCHEDULER=sched/builtin EXTRA_CONF="MaxJobCount=$((jobs + 1000))${EXTRA_CONF:+$'\n'$EXTRA_CONF}" \
  bash "$here/slurm_oracle.sh" setup "$nodes"
bash "$root/tools/slurm-dump.sh" "$out/dump" >/dev/null
/usr/bin/python3 "$here/slurm_requests.py" --batch "$jobs" "$seed" > "$out/jobs"

ids=()
while IFS= read -r line; do
  read -r -a args <<< "$line"
  ids+=("$(cd /tmp && sbatch -H --parsable "${args[@]}" --wrap true < /dev/null 2>/dev/null || echo refused)")
done < "$out/jobs"
held=()
for i in "${!ids[@]}"; do
  printf '%s\t%s\n' $((i + 1)) "${ids[i]}"  # line -> Slurm's job id
  if [ "${ids[i]}" != refused ]; then held+=("${ids[i]}"); fi
done > "$out/ids.tsv"
echo "submitted ${#held[@]} of ${#ids[@]} (the rest refused at submit)" >&2

sdiag -r >/dev/null
started=$(date +%s)
for ((i = 0; i < ${#held[@]}; i += 2000)); do  # releases in one RPC each, 2,000 ids at a time
  scontrol release "$(IFS=,; echo "${held[*]:i:2000}")"
done
sleep 3
while squeue -h -t PD -o '%r' | grep -qx None; do
  if [ $(($(date +%s) - started)) -gt 1200 ]; then
    echo "the main pass had not looked at every job in 20 minutes" >&2
    break
  fi
  sleep 2
done
sdiag > "$out/sdiag.txt"
squeue -h -o '%i	%T	%N	%r' | sort -n > "$out/slurm.tsv"
bash "$here/slurm_oracle.sh" stop

best=""
for _ in $(seq "$rounds"); do
  rm -rf "$out/colmatch"
  t0=$(date +%s.%N)
  rc=0  # (2: done, with jobs rejected at submit)
  "$colmatch" match --format slurm --dump "$out/dump" --jobs "$out/jobs" --out "$out/colmatch" >/dev/null 2>&1 || rc=$?
  [ "$rc" = 0 ] || [ "$rc" = 2 ] || { echo "colmatch exited $rc" >&2; exit 1; }
  t=$(echo "$(date +%s.%N) - $t0" | bc)
  if [ -z "$best" ] || [ "$(echo "$t < $best" | bc)" = 1 ]; then
    best=$t
    cp "$out/colmatch/summary.json" "$out/summary-best.json"
  fi
done
/usr/bin/python3 "$here/slurm_main_pass_compare.py" "$out" "$best" | tee "$out/compare.txt"
