# Sourced by tools/sge-dump.sh and tools/slurm-dump.sh: where a dump may be written, and how it is
# published. A dump folder carries `.colmatch-dump` naming the script that wrote it; a script replaces
# only such a folder (or an empty one), never a folder of anything else (issue 44: it had `rm -rf` OUT).

# dump_check_out OUT SCRIPT: exit 1 with a message unless OUT is absent, an empty folder, or a folder
# SCRIPT wrote. Called before anything is read or written.
dump_check_out() {
  local out=$1 script=$2
  [ -e "$out" ] || [ -L "$out" ] || return 0
  if [ -d "$out" ] && [ ! -L "$out" ]; then
    [ -z "$(ls -A "$out")" ] && return 0
    [ -f "$out/.colmatch-dump" ] && [ "$(cat "$out/.colmatch-dump")" = "$script" ] && return 0
  fi
  echo "$script: $out exists and is not a dump $script wrote (no .colmatch-dump naming it): nothing written;" \
       "give a new folder, or remove that one yourself" >&2
  exit 1
}

# dump_publish TMP OUT SCRIPT: marks TMP as SCRIPT's dump and renames it to OUT (replacing the earlier
# dump there, which dump_check_out allowed).
dump_publish() {
  local tmp=$1 out=$2 script=$3
  echo "$script" > "$tmp/.colmatch-dump"
  dump_check_out "$out" "$script"   # again: OUT may have changed while the commands ran
  rm -rf "$out"
  mv "$tmp" "$out"
}
