#!/usr/bin/env bash
# The layering as a test (docs/design.md, "Layout"): data flows one way, loaders -> engine (-> kernels) -> writers.
#   kernels/ includes nothing of the project above it (engine, loaders, tools);
#   engine/ includes nothing from loaders/ (the writers included) or tools/, and each of its stages
#   only the stages below it: model -> match -> placement -> batch -> schedule (engine/*/README.md);
#   engine/ has no source file outside its stage folders; no two modules (x.hpp with x.cpp) include each
#   other, directly or around a circle;
#   loaders/ outside writers/ include of engine/schedule/ only the configuration (policy.hpp, events.hpp),
#   never the simulator.
# Usage: layering.sh SOURCE_DIR. Prints each offending include (file:line) and exits 1, else prints a count.
set -u
cd "$1" || exit 2
bad=0
forbid() {  # folder, the include paths it may not name (an extended regex), why, [a subfolder left out]
  local hits
  hits=$(grep -rnE --include='*.[ch]pp' --include='*.h' "^[[:space:]]*#[[:space:]]*include[[:space:]]*\"($2)" "$1")
  [ -n "${4:-}" ] && hits=$(printf '%s\n' "$hits" | grep -v "^$1/$4/")
  if [ -n "$hits" ]; then
    printf '%s\n' "$hits" | sed "s|\$|   <- $3|"
    bad=1
  fi
}
forbid kernels 'engine/|loaders/|tools/|datasets/' "kernels/ knows nothing of the layers above it"
forbid engine 'loaders/|tools/' "engine/ knows nothing of files: loaders feed it, writers read it"
forbid loaders 'engine/schedule/(simulation|world|moab|backfill|reservation|availability|throttles|fbsng|wait_queue)' \
  "a loader reads the policy (engine/schedule/policy.hpp), never the simulator" writers
forbid engine/model 'engine/(match|placement|batch|schedule)/' "model/ is the data every stage reads: it knows no stage"
forbid engine/match 'engine/(placement|batch|schedule)/' "match/ decides eligibility from the model alone"
forbid engine/placement 'engine/(batch|schedule)/' "placement/ places one job: it knows no batch and no time"
forbid engine/batch 'engine/schedule/' "batch/ is one batch of jobs: it knows no time"
loose=$(find engine -maxdepth 1 -name '*.[ch]pp')
if [ -n "$loose" ]; then
  printf '%s   <- engine/ holds its sources in stage folders (model, match, placement, batch, schedule)\n' $loose
  bad=1
fi
# No include circle between modules (a module: x.hpp with x.cpp): tsort finds any loop in the graph.
edges=$(for f in $(find kernels engine loaders tools -name '*.[ch]pp'); do
  m=${f%.*}
  grep -hoE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]+"' "$f" | sed -E 's/.*"([^"]+)"/\1/' |
    while read -r inc; do
      [ -f "$inc" ] && [ "${inc%.*}" != "$m" ] && echo "$m ${inc%.*}"
    done
done)
if ! loop=$(printf '%s\n' "$edges" | tsort 2>&1 >/dev/null) || [ -n "$loop" ]; then
  printf '%s\n' "$loop" | sed 's/^tsort: //' | sed 's|$|   <- an include circle: modules that include each other cannot be read or changed apart|'
  bad=1
fi
files=$(find kernels engine loaders -name '*.hpp' -o -name '*.cpp' | wc -l)
[ $bad -eq 0 ] && echo "layering: $files files, every include in its layer"
exit $bad
