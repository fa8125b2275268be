#!/usr/bin/env bash
# Shared by the Grid Engine oracle scripts (sge_oracle.sh, sge_farms.sh): Grid Engine's environment, and
# execution hosts and cluster queues made from a template. Sourced, not run.

settings() { . /var/lib/gridengine/default/common/settings.sh; }

sched() {  # key value ... : set scheduler configuration lines
  local f; f=$(mktemp)
  {
    echo '#!/bin/sh'
    while [ $# -ge 2 ]; do echo "sed -i -e 's/^$1 .*/$1 $2/' \"\$1\""; shift 2; done
  } > "$f"
  chmod +x "$f"
  EDITOR="$f" qconf -msconf >/dev/null 2>&1 || true
  rm -f "$f"
}

# An execution host with its complex_values (simulated: no execution daemon).
add_host() {  # name complex_values
  local f; f=$(mktemp)
  printf 'hostname %s\nload_scaling NONE\ncomplex_values %s\nuser_lists NONE\nxuser_lists NONE\nprojects NONE\nxprojects NONE\nusage_scaling NONE\nreport_variables NONE\n' \
    "$1" "$2" > "$f"
  qconf -Ae "$f" >/dev/null
  rm -f "$f"
}

# A cluster queue: the template below (no PEs, no load thresholds, one slot, limits INFINITY) with
# "key value" lines read from stdin replacing its lines.
add_queue() {  # name
  local f; f=$(mktemp) name=$1
  cat > "$f" <<EOF
qname $name
hostlist NONE
seq_no 0
load_thresholds NONE
suspend_thresholds NONE
nsuspend 1
suspend_interval 00:05:00
priority 0
min_cpu_interval 00:05:00
processors UNDEFINED
qtype BATCH INTERACTIVE
ckpt_list NONE
pe_list NONE
rerun FALSE
slots 1
tmpdir /tmp
shell /bin/sh
prolog NONE
epilog NONE
shell_start_mode posix_compliant
starter_method NONE
suspend_method NONE
resume_method NONE
terminate_method NONE
notify 00:00:60
owner_list NONE
user_lists NONE
xuser_lists NONE
subordinate_list NONE
complex_values NONE
projects NONE
xprojects NONE
calendar NONE
initial_state default
s_rt INFINITY
h_rt INFINITY
s_cpu INFINITY
h_cpu INFINITY
s_fsize INFINITY
h_fsize INFINITY
s_data INFINITY
h_data INFINITY
s_stack INFINITY
h_stack INFINITY
s_core INFINITY
h_core INFINITY
s_rss INFINITY
h_rss INFINITY
s_vmem INFINITY
h_vmem INFINITY
EOF
  local key value
  while read -r key value; do
    [ -z "$key" ] && continue
    sed -i "s|^$key .*|$key $value|" "$f"
  done
  qconf -Aq "$f" >/dev/null
  rm -f "$f"
}
