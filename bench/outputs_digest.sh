#!/usr/bin/env bash
# Digests of colmatch's outputs on every bundled input and a matrix of simulate policies (conservative
# with compression = true among them, which builds before 5916210 refuse): the check that a
# restructure changed no output ("byte-identical before and after"). Run it with the binary built before
# and after the change and compare the two listings:
#   bench/outputs_digest.sh OLD/colmatch /tmp/old > old.txt
#   bench/outputs_digest.sh NEW/colmatch /tmp/new > new.txt
#   diff old.txt new.txt          # empty: every output file the same bytes
# cycles.csv (wall-clock times per cycle) is left out, summaries are digested without their timings;
# everything else is listed as "sha256  run/file". A run that fails is listed with its exit code (the same failure
# on both sides compares equal). Extra runs: BIG=1 adds the generated 1M-job farm (match and simulate).
# Usage: outputs_digest.sh COLMATCH WORKDIR   (run from the source tree, or set SRC)
set -u
BIN=$(readlink -f "$1")
WORK=$2
SRC=${SRC:-$(cd "$(dirname "$0")/.." && pwd)}
rm -rf "$WORK" && mkdir -p "$WORK/out" "$WORK/pol" || exit 2
cd "$SRC" || exit 2
D=datasets
KTH=$D/samples/kth_sp2_head3000.swf.gz
GOOGLE=(--format google2011 --machines $D/samples/google_machine_events.csv.gz --tasks $D/samples/google_task_events_job_mod25.csv.gz)
DEMO=(--farm $D/demo/farm.toml --taskers $D/demo/taskers.jsonl --jobs $D/demo/jobs.jsonl)
SGE=(--format sge --dump $D/sge/farm80 --accounting $D/sge/farm80-accounting.gz)
OPENB=(--format openb --nodes $D/samples/openb_nodes.csv --pods $D/samples/openb_pods_gpuspec20_head2000.csv)

run() {  # name, colmatch arguments...
  local name=$1
  shift
  "$BIN" "$@" --out "$WORK/out/$name" >"$WORK/out/$name.stdout" 2>"$WORK/out/$name.stderr"
  echo "$?" >"$WORK/out/$name.rc"
}

# ---- match on every bundled input ----
run demo match "${DEMO[@]}"
run google match "${GOOGLE[@]}"
run openb match "${OPENB[@]}"
run sge match "${SGE[@]}"
run sge-busy match --format sge --dump $D/sge/farm80-busy
run sge1000 match --format sge --dump $D/sge/farm1000
run dirac match --format dirac --resources $D/demo/dirac/resources.json --jdl $D/demo/dirac/jobs.jdl
run dirac-cfg match --format dirac --resources $D/demo/dirac/resources.cfg --jdl $D/demo/dirac/jobs.jdl
run vov match --format vov --taskers $D/demo/vov/taskers.tcl --resources $D/demo/vov/resources.tcl --jobs $D/demo/vov/jobs.jsonl
run vov-native match --farm $D/demo/vov_native/farm.toml --taskers $D/demo/vov_native/taskers.jsonl --jobs $D/demo/vov_native/jobs.jsonl
for jobs in $D/slurm/*.jobs; do
  base=$(basename "$jobs" .jobs)
  dump=$base  # the dump it was written for: the longest folder its name starts with (c100-flat-tasks: c100-flat)
  while [ ! -d "$D/slurm/$dump" ] && [ ${#dump} -gt 1 ]; do
    case $dump in *-*) dump=${dump%-*} ;; *[0-9]) dump=${dump%[0-9]} ;; *) dump=${dump%?} ;; esac
  done
  dump=$D/slurm/$dump
  run "slurm-$base" match --format slurm --dump "$dump" --jobs "$jobs"
done
for dump in $D/slurm/*/; do
  [ -f "$dump/squeue.json" ] || [ -f "$dump/scontrol-job.txt" ] || continue
  run "slurm-dump-$(basename "$dump")" match --format slurm --dump "${dump%/}"
done
"$BIN" generate --taskers 500 --jobs 4000 --seed 7 --save "$WORK/synth" >/dev/null 2>&1
SYNTH=(--farm "$WORK/synth/farm.toml" --taskers "$WORK/synth/taskers.jsonl" --jobs "$WORK/synth/jobs.jsonl")
run synth match "${SYNTH[@]}"

# ---- simulate: each example policy, and a matrix of backfill x allocation x availability ----
for p in $D/examples/*.toml; do
  case $p in *sweep*) continue ;; esac
  run "kth-$(basename "$p" .toml)" simulate --format swf --log $KTH --policy "$p"
done
for backfill in none greedy easy easy3 conservative compressed; do
  for alloc in greatest_power first_available best_fit worst_fit consecutive_best_fit; do
    pol=$WORK/pol/$backfill-$alloc.toml
    {
      echo "[policy]"
      echo "allocation = \"$alloc\""
      case $backfill in
        easy3) echo 'backfill = "easy"'; echo 'reservation_depth = 3' ;;
        compressed) echo 'backfill = "conservative"'; echo 'compression = true' ;;
        *) echo "backfill = \"$backfill\"" ;;
      esac
    } >"$pol"
    run "kth-$backfill-$alloc" simulate --format swf --log $KTH --policy "$pol"
    case $alloc in greatest_power | best_fit)
      run "demo-$backfill-$alloc" simulate "${DEMO[@]}" --policy "$pol" --until 86400
      run "google-$backfill-$alloc" simulate "${GOOGLE[@]}" --policy "$pol"
      run "synth-$backfill-$alloc" simulate "${SYNTH[@]}" --policy "$pol"
      ;;
    esac
  done
done
for avail in utilized combined; do
  printf '[policy]\nbackfill = "easy"\nresource_availability = "%s"\n' $avail >"$WORK/pol/$avail.toml"
  run "google-easy-$avail" simulate "${GOOGLE[@]}" --policy "$WORK/pol/$avail.toml"
  # the book's walk under utilization (TaskerBook::plan, its capacity made step by step)
  printf '[policy]\nbackfill = "conservative"\nresource_availability = "%s"\n' $avail >"$WORK/pol/$avail-c.toml"
  run "google-conservative-$avail" simulate "${GOOGLE[@]}" --policy "$WORK/pol/$avail-c.toml"
  run "demo-conservative-$avail" simulate "${DEMO[@]}" --policy "$WORK/pol/$avail-c.toml" --until 86400
  printf '[policy]\nbackfill = "easy"\nreservation_depth = 3\nresource_availability = "%s"\n' $avail \
    >"$WORK/pol/$avail-3.toml"
  run "synth-depth3-$avail" simulate "${SYNTH[@]}" --policy "$WORK/pol/$avail-3.toml"
done
run sge-sim simulate "${SGE[@]}" --policy $D/examples/easy.toml
run sge-sim-cons simulate "${SGE[@]}" --policy $D/examples/conservative.toml

if [ "${BIG:-0}" = 1 ]; then
  "$BIN" generate --jobs 1000000 --categories 1000 --seed 1 --save "$WORK/big" >/dev/null 2>&1
  BIGF=(--farm "$WORK/big/farm.toml" --taskers "$WORK/big/taskers.jsonl" --jobs "$WORK/big/jobs.jsonl")
  run big match "${BIGF[@]}"
  run big-easy simulate "${BIGF[@]}" --policy $D/examples/easy.toml
  rm -rf "$WORK/big"
fi

cd "$WORK/out" || exit 2
find . -type f ! -name summary.json ! -name cycles.csv ! -name '*.stderr' ! -name '*.stdout' | sort | xargs sha256sum
# summaries (summary.json, and the copy a run prints) without their wall-clock figures ("seconds",
# "cycle_ms", memory) and what the machine gave (threads, instruction set, huge pages); stderr without
# figures with units ("in 0.12 s", "3.1 MB")
for f in $(find . -name summary.json -o -name '*.stdout' | sort); do
  printf '%s  %s\n' "$(grep -vE '"(seconds|cycle_ms|peak_rss[a-z_]*|rss[a-z_]*|threads|instruction_set|huge_pages)"' "$f" | sha256sum | cut -c1-64)" "$f"
done
for f in $(find . -name '*.stderr' | sort); do
  printf '%s  %s\n' "$(sed -E 's/[0-9]+(\.[0-9]+)? ?(s|ms|MB\/s|MB|GB)\b/N/g' "$f" | sha256sum | cut -c1-64)" "$f"
done
