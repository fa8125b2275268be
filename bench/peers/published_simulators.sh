#!/usr/bin/env bash
# Two published scheduling simulators against colmatch on one SWF log, EASY backfilling, timed in the same run
# (issue 46: "KTH EASY whole command >= 100x Alea's and CQSim's"). NOT run in CI: it builds and runs other
# projects' code from checkouts the caller provides; nothing is downloaded.
#
#   bash bench/peers/published_simulators.sh ALEA CQSIM LOG.swf[.gz] PROCS OUT [ROUNDS]
#
# ALEA: a checkout of https://github.com/aleasimulator/alea (the folder holding Alea/; GPL, Java: needs javac
#   and java, Debian's openjdk-17-jdk-headless). Built with javac into OUT/alea. Its bundled simjava.jar has
#   no Sim_system.setInComplete, which ExperimentSetup calls between two experiments to reset SimJava; with
#   one experiment the call does nothing we need, so the copy built here comments that one line out.
#   Configured: data_sets = the log, one cluster of PROCS one-CPU machines, algorithms=2 (EASY), use_RAM=false
#   (SWF's memory is -1 on KTH), total_gridlet = the log's job lines.
# CQSIM: a checkout of https://github.com/SPEAR-IIT/CQSim (MIT, Python 2: PYTHON2=..., default `python2`;
#   Debian 12 has no Python 2, this machine's came from pyenv 2.7.18). Run as its README runs it, with
#   `-b 1` (EASY), `-w 0` (no start window), `-R` the log's job lines (its default reads 8,000), `-v 0`.
#   CQSim's EASY orders backfill candidates by their real run times (its 'run' field), not the requests.
# colmatch: `simulate --format swf --policy datasets/examples/easy.toml`, once with every output and once with
#   `--write metrics`.
#
# Each of the four commands runs ROUNDS times (default 3), alternating; the fastest wall clock of each (the
# whole process: start-up, reading, simulating, writing, as a user waits for it) and each simulator's mean
# wait go to OUT/times.tsv and the screen, with the ratios to colmatch's. The simulators' own outputs stay
# in OUT/alea and OUT/cqsim.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
alea_src=${1:?ALEA checkout} cqsim_src=${2:?CQSIM checkout} log=${3:?SWF log} procs=${4:?processors} out=${5:?output folder}
rounds=${6:-3}
colmatch=${COLMATCH:-$root/build/release/tools/colmatch}
python2=${PYTHON2:-python2}
[ -x "$colmatch" ] || { echo "no colmatch at $colmatch (COLMATCH=...)" >&2; exit 1; }
[ -d "$alea_src/Alea/src" ] || { echo "$alea_src has no Alea/src (a checkout of aleasimulator/alea)" >&2; exit 1; }
[ -f "$cqsim_src/src/cqsim.py" ] || { echo "$cqsim_src has no src/cqsim.py (a checkout of SPEAR-IIT/CQSim)" >&2; exit 1; }
if [ -e "$out" ] && [ -n "$(ls -A "$out")" ]; then echo "$out is not empty" >&2; exit 1; fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
log=$(cd "$(dirname "$log")" && pwd)/$(basename "$log")

name=trace  # (CQSim names its outputs by the log's name up to its first dot)
swf=$out/$name.swf
case "$log" in *.gz) zcat "$log" > "$swf" ;; *) cp "$log" "$swf" ;; esac
lines=$(grep -vc '^;' "$swf")

# Alea
cp -r "$alea_src/Alea" "$out/alea"
sed -i 's|^\(\s*\)Sim_system.setInComplete(true);|\1// Sim_system.setInComplete(true);  (not in the bundled simjava.jar)|' \
  "$out/alea/src/xklusac/environment/ExperimentSetup.java"
(cd "$out/alea" && mkdir -p classes && javac -nowarn -encoding UTF-8 -cp 'lib/*' -d classes $(find src -name '*.java') 2>/dev/null)
mkdir -p "$out/alea/data-set"
cp "$swf" "$out/alea/data-set/$name.swf"
printf '0\tcluster\t%s\t1\t1\t1048576\n' "$procs" > "$out/alea/data-set/$name.swf.machines"
sed -i -e "s/^data_sets=.*/data_sets=$name.swf/" -e 's#^data_set_dir=.*#data_set_dir=./data-set#' \
  -e "s/^total_gridlet=.*/total_gridlet=$lines/" -e 's/^first_arrival=.*/first_arrival=0/' \
  -e 's/^algorithms=.*/algorithms=2/' -e 's/^use_RAM=.*/use_RAM=false/' -e 's/^visualize=.*/visualize=false/' \
  -e 's/^visualize_schedule=.*/visualize_schedule=false/' -e 's/^pinJobs=.*/pinJobs=false/' \
  "$out/alea/configuration.properties"

# CQSim
cp -r "$cqsim_src" "$out/cqsim"
mkdir -p "$out/cqsim/data/InputFiles" "$out/cqsim/data/Results" "$out/cqsim/data/Fmt" "$out/cqsim/data/Debug"
cp "$swf" "$out/cqsim/data/InputFiles/$name.swf"

wall() {  # wall clock of a command, seconds
  local t0 t1
  t0=$(date +%s.%N)
  "$@"
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc -l
}
run_alea() { (cd "$out/alea" && rm -rf results && java -cp 'classes:lib/*' xklusac.environment.ExperimentSetup > run.log 2>&1); }
run_cqsim() {
  (cd "$out/cqsim/src" && rm -f ../data/Results/* ../data/Fmt/* ../data/Debug/* &&
    "$python2" cqsim.py -j "$name.swf" -n "$name.swf" -b 1 -w 0 -R "$lines" -v 0 > ../run.log 2>&1)
}
run_colmatch() {  # $1: all | metrics
  rm -rf "$out/colmatch-$1"
  "$colmatch" simulate --format swf --log "$log" --policy "$root/datasets/examples/easy.toml" --write "$1" \
    --out "$out/colmatch-$1" > /dev/null 2>&1 || [ -f "$out/colmatch-$1/metrics.json" ]
}

declare -A best
for ((r = 0; r < rounds; ++r)); do
  for what in alea cqsim colmatch-all colmatch-metrics; do
    case $what in
      alea) s=$(wall run_alea) ;;
      cqsim) s=$(wall run_cqsim) ;;
      colmatch-*) s=$(wall run_colmatch "${what#colmatch-}") ;;
    esac
    if [ -z "${best[$what]:-}" ] || (($(echo "$s < ${best[$what]}" | bc -l))); then best[$what]=$s; fi
  done
done

# the mean waits, seconds: Alea's Results csv (its "wait" column, decimal comma), CQSim's .rst (field 6),
# colmatch's metrics.json
alea_wait=$(awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "wait") c = i } NR == 2 { gsub(",", ".", $c); print $c }' \
  "$out"/alea/results/*/"Results("*").csv")
cqsim_wait=$(awk -F';' '{ s += $6; n++ } END { printf "%.2f", s / n }' "$out/cqsim/data/Results/$name.rst")
colmatch_wait=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["wait_seconds"]["mean"])' \
  "$out/colmatch-metrics/metrics.json")

{
  printf 'simulator\tseconds\tmean_wait_s\tx_colmatch_all\tx_colmatch_metrics\n'
  for what in alea cqsim colmatch-all colmatch-metrics; do
    case $what in alea) w=$alea_wait ;; cqsim) w=$cqsim_wait ;; *) w=$colmatch_wait ;; esac
    printf '%s\t%.3f\t%s\t%.1f\t%.1f\n' "$what" "${best[$what]}" "$w" \
      "$(echo "${best[$what]} / ${best[colmatch-all]}" | bc -l)" "$(echo "${best[$what]} / ${best[colmatch-metrics]}" | bc -l)"
  done
} | tee "$out/times.tsv"
echo "($name: $lines job lines, $procs processors; fastest of $rounds rounds each)"
