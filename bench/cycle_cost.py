#!/usr/bin/python3
"""What a scheduling cycle costs with N jobs waiting (issue 24, BENCHMARKS.md "Cycle cost"): a native farm of
64 taskers of 8 slots, 60 of them held for the whole run by long jobs; 4,000 short 8-slot jobs of higher
priority (50 to 71 s) run one after another on the other 4 (each end is a cycle); N 8-slot jobs of 10^6 s wait behind
them all run long, in 4 categories. `colmatch simulate --until 50000` under each policy (about 4,000
cycles); the summary's cycle_ms (scheduler wall time per cycle: p50, mean) and the simulate seconds. A run
longer than --limit seconds is stopped. With --pooled every job spreads its slots ($fill_up) and the waiting
ones name no rack: the farm is one pool of 512 slots, and depth > 1 and conservative plan on its count
(engine/schedule/pool_profile.hpp).

    /usr/bin/python3 bench/cycle_cost.py --cli build/release/tools/colmatch --waiting 1000 10000 100000 1000000
"""
import argparse
import json
import os
import subprocess
import tempfile
import time

POLICIES = {"strict": 'backfill = "none"', "easy": 'backfill = "easy"', "greedy": 'backfill = "greedy"',
            "conservative": 'backfill = "conservative"'}


def write_farm(d, waiting, pooled):
    with open(os.path.join(d, "farm.toml"), "w") as f:
        f.write('name = "cycles"\n[[attribute]]\nname = "slots"\ntype = "int"\nconsumable = true\n'
                '[[attribute]]\nname = "rack"\ntype = "int"\n')
    with open(os.path.join(d, "taskers.jsonl"), "w") as f:
        for t in range(64):
            f.write(json.dumps({"name": f"t{t}", "attrs": {"slots": 8, "rack": t % 4}}) + "\n")
    spread = {"allocation_rule": "$fill_up"} if pooled else {}
    with open(os.path.join(d, "jobs.jsonl"), "w") as f:
        n = 0
        for _ in range(60):  # the farm's long residents, first in line
            f.write(json.dumps({"id": str(n), "submit": 0, "priority": 100, "slots": 8, "runtime": 1e7,
                                "walltime": 1e7, **spread}) + "\n")
            n += 1
        for i in range(4000):  # the short stream, ends spread out (a cycle that no known event follows
            # before --until is a full one: it may be the run's last)
            f.write(json.dumps({"id": str(n), "submit": 0, "priority": 10, "slots": 8, "runtime": 50 + 7 * (i % 4),
                                "walltime": 80, **spread}) + "\n")
            n += 1
        for i in range(waiting):  # the waiting queue, in 4 categories
            rack = {} if pooled else {"requests": f"rack=={i % 4}"}
            f.write(json.dumps({"id": str(n), "submit": 0, "priority": 0, "slots": 8, "runtime": 1e6,
                                "walltime": 1e6, **rack, **spread}) + "\n")
            n += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default="build/release/tools/colmatch")
    ap.add_argument("--waiting", type=int, nargs="+", default=[1000, 10000, 100000])
    ap.add_argument("--policies", nargs="+", default=list(POLICIES))
    ap.add_argument("--limit", type=float, default=300)
    ap.add_argument("--pooled", action="store_true", help="every job $fill_up, no rack: one pool of slots")
    a = ap.parse_args()
    print("| waiting | policy | cycles | cycle p50 | cycle mean | simulate |")
    print("|---:|---|---:|---:|---:|---:|")
    for n in a.waiting:
        with tempfile.TemporaryDirectory() as d:
            write_farm(d, n, a.pooled)
            for p in a.policies:
                with open(os.path.join(d, "p.toml"), "w") as f:
                    f.write("[policy]\n" + POLICIES[p] + "\n")
                out = os.path.join(d, "out-" + p)
                t0 = time.time()
                try:
                    subprocess.run([a.cli, "simulate", "--farm", os.path.join(d, "farm.toml"), "--taskers",
                                    os.path.join(d, "taskers.jsonl"), "--jobs", os.path.join(d, "jobs.jsonl"),
                                    "--policy", os.path.join(d, "p.toml"), "--until", "50000", "--out", out],
                                   check=True, capture_output=True, timeout=a.limit)
                except subprocess.TimeoutExpired:
                    print(f"| {n:,} | {p} | | | | > {a.limit:.0f} s |", flush=True)
                    continue
                s = json.load(open(os.path.join(out, "summary.json")))
                c = s["cycle_ms"]
                print(f"| {n:,} | {p} | {s['cycles']:,} | {c['p50'] * 1000:.1f} us | {c['mean'] * 1000:.1f} us | "
                      f"{s['seconds']['simulate']:.2f} s ({time.time() - t0:.1f} s whole) |", flush=True)


if __name__ == "__main__":
    main()
