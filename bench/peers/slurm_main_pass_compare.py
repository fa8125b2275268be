#!/usr/bin/python3
"""Slurm's main pass against colmatch's on one queue (issue 46; bench/peers/slurm_main_pass_speed.sh writes
OUT): Slurm's cycle times from sdiag, colmatch's match_total and whole command, and each job's outcome.

    /usr/bin/python3 bench/peers/slurm_main_pass_compare.py OUT WHOLE_SECONDS

Reads OUT/sdiag.txt (sdiag's "Main schedule statistics", microseconds), OUT/summary-best.json (colmatch's
fastest run), OUT/ids.tsv (line -> Slurm job id or "refused"), OUT/slurm.tsv (squeue: id, state, nodes,
reason) and OUT/colmatch/results.csv. A job agrees when both started it on the same nodes, both left it
pending, or colmatch rejected it as refused at submit ("Requested node configuration is not available") where
Slurm refused it or, submitted held (a held job's node selection waits for its release), left it pending
(BadConstraints; Priority when its partition was blocked before its turn). Prints one summary line; the jobs that differ follow it, one a line.
"""
import csv
import json
import re
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from slurm_digest import expand  # noqa: E402  (Slurm's host lists: n[001-003,010])


def main_schedule_statistics(path):
    """sdiag's main scheduler block: {"Last cycle": us, "Max cycle": us, ...}."""
    out, inside = {}, False
    with open(path) as f:
        for line in f:
            if line.startswith("Main schedule statistics"):
                inside = True
                continue
            if inside:
                m = re.match(r"\s+([A-Za-z ]+):\s+([0-9.]+)", line)
                if not m:
                    break
                out[m.group(1).strip()] = float(m.group(2))
    if "Max cycle" not in out:
        sys.exit(f"{path}: no 'Max cycle' under 'Main schedule statistics'")
    return out


def main():
    out, whole = sys.argv[1], float(sys.argv[2])
    sdiag = main_schedule_statistics(f"{out}/sdiag.txt")
    summary = json.load(open(f"{out}/summary-best.json"))
    match_total = summary["seconds"]["match_total"]
    slurm_id = dict(line.rstrip("\n").split("\t") for line in open(f"{out}/ids.tsv"))
    slurm = {}
    for line in open(f"{out}/slurm.tsv"):
        f = line.rstrip("\n").split("\t")
        slurm[f[0]] = (f[1], set(expand(f[2])) if f[1] in ("CONFIGURING", "RUNNING") else set(), f[3])
    mine = {}
    with open(f"{out}/colmatch/results.csv") as f:
        for row in csv.DictReader(f):
            status, nodes, why = mine.get(row["job"], (row["status"], set(), row["reason"]))
            if row["tasker"]:
                nodes.add(row["tasker"])
            mine[row["job"]] = (status, nodes, why)
    agree, differ, started, refused = 0, [], 0, 0
    for line, sid in slurm_id.items():
        status, nodes, why = mine.get(line, ("missing", set(), ""))
        refused_here = status == "rejected" and "Requested node configuration is not available" in why
        refused += refused_here
        if sid == "refused":
            ok = refused_here
            theirs = "refused at submit"
        else:
            state, their_nodes, reason = slurm.get(sid, ("missing", set(), ""))
            started += bool(their_nodes)
            if their_nodes:
                ok = nodes == their_nodes
            elif refused_here:
                ok = True  # Slurm's held job: its node selection waits for the release, or for its partition
            else:
                ok = status == "pending"
            theirs = f"{state} {','.join(sorted(their_nodes)) or reason}"
        if ok:
            agree += 1
        else:
            differ.append(f"line {line} (Slurm job {sid}): Slurm {theirs}; colmatch {status} {','.join(sorted(nodes))}")
    max_cycle = sdiag["Max cycle"] / 1e6
    mean_cycle = sdiag.get("Mean cycle", 0) / 1e6
    print(f"nodes {summary['taskers']}, jobs {len(slurm_id)}: Slurm's main pass max cycle {max_cycle:.3f} s, mean "
          f"{mean_cycle:.3f} s over {sdiag.get('Total cycles', 0):.0f} cycles, {started} started; colmatch match_total "
          f"{match_total:.4f} s ({max_cycle / match_total:.0f}x the max cycle), whole command {whole:.3f} s "
          f"({max_cycle / whole:.1f}x); jobs alike {agree}/{len(slurm_id)} ({refused} refused at submit by colmatch)")
    for d in differ:
        print(d)


if __name__ == "__main__":
    main()
