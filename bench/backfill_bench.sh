#!/usr/bin/env bash
# The backfill policies on real logs, and colmatch simulate against a plain Python FCFS (issue 24;
# BENCHMARKS.md "Backfill policies"). For each log, ROUNDS rounds alternate: every policy's whole
# `colmatch simulate` command (load, simulate, write), then `python3 bench/fcfs_baseline.py` on the same log
# (one pool of MaxProcs processors, no per-node matching, no backfill). Prints per run the wall seconds of
# the whole command, the summary's simulate seconds, cycles and mean wait; then the minimum per policy
# and the ratio to the Python FCFS's minimum. A run longer than LIMIT seconds is stopped ("> LIMIT").
# Usage: bench/backfill_bench.sh [BUILD_DIR] [ROUNDS] [LIMIT] [LOG ...]
#   (default: build/release, 3 rounds, 600 s, the full KTH and RICC logs)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build/release}
rounds=${2:-3}
limit=${3:-600}
shift 3 || shift $#
raw=$here/../shared/datasets/raw/parallel-workloads-archive
logs=("$@")
[ ${#logs[@]} -eq 0 ] && logs=("$raw/KTH-SP2-1996-2.1-cln.swf.gz" "$raw/RICC-2010-2.swf.gz")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
policies=(strict easy depth4 conservative greedy)
printf '[policy]\nbackfill = "none"\n' > "$work/strict.toml"
printf '[policy]\nbackfill = "easy"\n' > "$work/easy.toml"
printf '[policy]\nbackfill = "easy"\nreservation_depth = 4\n' > "$work/depth4.toml"
printf '[policy]\nbackfill = "conservative"\n' > "$work/conservative.toml"
printf '[policy]\nbackfill = "greedy"\n' > "$work/greedy.toml"
now() { date +%s.%N; }
for log in "${logs[@]}"; do
  name=$(basename "$log" .swf.gz)
  declare -A best=()
  for r in $(seq "$rounds"); do
    for p in "${policies[@]}"; do
      out=$work/$name-$p
      rm -rf "$out"
      t0=$(now)
      if timeout "$limit" "$build/tools/colmatch" simulate --format swf --log "$log" --policy "$work/$p.toml" \
        --out "$out" > /dev/null 2>&1 || [ $? -eq 2 ]; then  # 2: the log's rejected jobs
        t=$(echo "$(now) - $t0" | bc)
        sim=$(grep -o '"simulate": [0-9.]*' "$out/summary.json" | awk '{print $2}')
        cycles=$(grep -o '"cycles": [0-9]*' "$out/metrics.json" | awk '{print $2}')
        wait=$(grep -o '"mean": [0-9.]*' "$out/metrics.json" | head -1 | awk '{print $2}')
        echo "$name round $r $p: $t s (simulate $sim s, $cycles cycles, mean wait $wait s)"
        if [ -z "${best[$p]:-}" ] || [ "$(echo "$t < ${best[$p]}" | bc)" = 1 ]; then best[$p]=$t; fi
      else
        echo "$name round $r $p: > $limit s"
        best[$p]="> $limit"
      fi
    done
    t0=$(now)
    /usr/bin/python3 "$here/bench/fcfs_baseline.py" "$log" "$work/fcfs.csv" > /dev/null
    t=$(echo "$(now) - $t0" | bc)
    echo "$name round $r python-fcfs: $t s"
    if [ -z "${best[fcfs]:-}" ] || [ "$(echo "$t < ${best[fcfs]}" | bc)" = 1 ]; then best[fcfs]=$t; fi
  done
  echo "== $name: minimum of $rounds (ratio to the Python FCFS)"
  for p in "${policies[@]}"; do
    case "${best[$p]}" in
      ">"*) echo "$p ${best[$p]} s" ;;
      *) printf '%s %.2f s (%.2fx)\n' "$p" "${best[$p]}" "$(echo "${best[$p]} / ${best[fcfs]}" | bc -l)" ;;
    esac
  done
  printf 'python-fcfs %.2f s\n' "${best[fcfs]}"
  unset best
done
