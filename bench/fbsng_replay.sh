#!/usr/bin/env bash
# FBSNG against Moab-style policies on real workload logs (issue 9; BENCHMARKS.md "FBSNG on real logs").
# The SWF queue field of KTH is empty and RICC's puts 99.9% of jobs in one queue, so each log is first
# given three queues by job size (q1: 1 processor, q2: 2-16, q3: more), written to a derived log in
# $WORK. Then `colmatch simulate` runs each policy and this prints, per policy: simulate seconds, cycles
# (metrics.json) and cycle cost (summary.json), utilisation (1 - idle), and per queue: starts, share of slot-seconds
# and mean/p95 wait (from schedule.csv).
# Usage: bench/fbsng_replay.sh [BUILD_DIR] [LOG ...]   (default: build/release, KTH and RICC)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build/release}
shift || true
raw=$here/../shared/datasets/raw/parallel-workloads-archive
logs=("$@")
[ ${#logs[@]} -eq 0 ] && logs=("$raw/KTH-SP2-1996-2.1-cln.swf.gz" "$raw/RICC-2010-2.swf.gz")
WORK=${WORK:-$(mktemp -d)}
cat > "$WORK/moab-strict.toml" <<'T'
[policy]
backfill = "none"
T
cat > "$WORK/moab-easy.toml" <<'T'
[policy]
backfill = "easy"
T
cat > "$WORK/fbsng-equal.toml" <<'T'
# queues take turns (QPI = QPD = 1, gaps wide); a section is passed 50 times at most
[policy]
scheduler = "fbsng"
[policy.fbsng.queues."*"]
QPI = 1
QPD = 1
QPG = 100
SPG = 50
T
# as fbsng-equal, and the large-job queue holds the others when it is stuck (the seed's bulk queue)
{ cat "$WORK/fbsng-equal.toml"; cat <<'T'; } > "$WORK/fbsng-large.toml"
[policy.fbsng.queues.q3]
QPI = 1
QPD = 1
QPG = 1
SPG = 50
T
for log in "${logs[@]}"; do
  name=$(basename "$log" .swf.gz)
  derived=$WORK/$name-3q.swf.gz
  zcat "$log" | awk '/^;/ {print; next} {p = $8; if (p <= 0) p = $5; $15 = (p <= 1) ? 1 : (p <= 16 ? 2 : 3); print}' |
    gzip > "$derived"
  echo "### $name (three queues by size)"
  echo
  echo "| policy | simulate s | cycles | cycle us p50 / p99 / mean | utilisation | q1 starts, slot share, wait mean / p95 s | q2 | q3 |"
  echo "|---|---|---|---|---|---|---|---|"
  for pol in moab-strict moab-easy fbsng-equal fbsng-large; do
    out=$WORK/$name-$pol
    rm -rf "$out"
    "$build/tools/colmatch" simulate --format swf --log "$derived" --policy "$WORK/$pol.toml" --out "$out" \
      > "$out.summary.json" 2> /dev/null || true
    sim=$(grep -o '"simulate": [0-9.]*' "$out.summary.json" | awk '{printf "%.2f", $2}')
    metrics=$out/metrics.json
    cycles=$(grep -o '"cycles": [0-9]*' "$metrics" | awk '{print $2}')
    cost=$(grep -o '"cycle_ms": {[^}]*}' "$out.summary.json" |
      awk -F'[:,}]' '{printf "%.1f / %.1f / %.1f", $3 * 1000, $5 * 1000, $9 * 1000}')
    util=$(grep -o '"utilisation": [0-9.]*' "$metrics" | awk '{printf "%.3f", $2}')
    # per started job: queue, wait, slot-seconds (a $fill_up job has one row per tasker)
    awk -F, 'NR > 1 && $10 == "started" {
        if (!($1 in q)) { q[$1] = $8; w[$1] = $5 }
        s[$1] += ($4 - $3) * $7 }
      END { for (j in q) print q[j], w[j], s[j] }' "$out/schedule.csv" > "$out.jobs"
    total=$(awk '{t += $3} END {print t}' "$out.jobs")
    queues=""
    for k in q1 q2 q3; do
      queues+=$(awk -v k=$k '$1 == k {print $2, $3}' "$out.jobs" | sort -n |
        awk -v t="$total" '{w[NR] = $1; sum += $1; ss += $2}
          END { if (NR == 0) { printf "| 0 "; exit }
                i = int(0.95 * NR); if (i < 1) i = 1
                printf "| %d, %.3f, %.0f / %.0f ", NR, ss / t, sum / NR, w[i] }')
    done
    echo "| $pol | $sim | $cycles | $cost | $util $queues|"
  done
  echo
done
