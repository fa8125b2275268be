#!/usr/bin/python3
"""Benchmark of `colmatch sweep` (issue 30), its ratios measured in one run (BENCHMARKS.md):

1. A 12-point sweep over a log (the full KTH SP2 log: backfill x interval x allocation) with 2 workers,
   against the sequential loop of the same 12 `colmatch simulate` commands (each as a user types it:
   default threads), alternated `--rounds` times; min and median of each and their ratio.
2. The sweep machinery's cost per point on the 3,000-job KTH sample: sweeps of 1 and of N points on one
   worker against loops of the same 1 and N commands; (sweep(N) - sweep(1) - (loop(N) - loop(1))) / (N - 1)
   leaves out the fixed start (Python, Dask, the cluster) and the runs themselves.

    /usr/bin/python3 bench/sweep_bench.py --cli build/release/tools/colmatch \\
        --log ../shared/datasets/raw/parallel-workloads-archive/KTH-SP2-1996-2.1-cln.swf.gz
"""
import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE = os.path.join(HERE, "..", "datasets", "samples", "kth_sp2_head3000.swf.gz")

GRID12 = """
[inputs.log]
format = "swf"
log = "{log}"

[grid]
backfill = ["none", "easy"]
interval = [0, 60, 300]
allocation = ["greatest_power", "first_available"]
"""


def timed(cmd):
    t = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode not in (0, 2):
        raise SystemExit(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr}")
    return time.perf_counter() - t


def sweep(cli, spec, out, workers):
    shutil.rmtree(out, ignore_errors=True)
    return timed([cli, "sweep", spec, "--out", out, "--workers", str(workers)])


def loop(cli, log, policies, out, threads=None):
    t = 0.0
    for p in policies:
        cmd = [cli, "simulate", "--format", "swf", "--log", log, "--policy", p, "--out", out]
        if threads:
            cmd += ["--threads", str(threads)]
        t += timed(cmd)
    return t


def policies_of(out):
    folder = os.path.join(out, "points")
    return [os.path.join(folder, f) for f in sorted(os.listdir(folder))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--log", required=True, help="the log of the 12-point sweep (the full KTH SP2 log)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--points", type=int, default=25, help="N of the per-point cost")
    a = ap.parse_args()
    cli, log = os.path.abspath(a.cli), os.path.abspath(a.log)
    with tempfile.TemporaryDirectory() as tmp:
        spec = os.path.join(tmp, "sweep.toml")
        with open(spec, "w") as f:
            f.write(GRID12.format(log=log))
        sweep(cli, spec, os.path.join(tmp, "warm"), 2)  # page cache, Python's bytecode
        policies = policies_of(os.path.join(tmp, "warm"))
        assert len(policies) == 12
        seq, par = [], []
        for _ in range(a.rounds):
            seq.append(loop(cli, log, policies, os.path.join(tmp, "seq")))
            par.append(sweep(cli, spec, os.path.join(tmp, "par"), 2))
        print(f"12-point sweep over {os.path.basename(log)}, {a.rounds} rounds alternating, min (median):")
        print(f"  sequential loop of 12 colmatch simulate: {min(seq):.3f} ({statistics.median(seq):.3f}) s")
        print(f"  colmatch sweep --workers 2:              {min(par):.3f} ({statistics.median(par):.3f}) s")
        print(f"  ratio sweep / loop: {min(par) / min(seq):.2f} of the minima, "
              f"{statistics.median(par) / statistics.median(seq):.2f} of the medians")

        # the cost per point: explicit points of the sample, one worker
        n = a.points
        pts = "".join(f"[[point]]\ninterval = {i}\n" for i in range(n))
        for k, text in (("one", "[[point]]\ninterval = 0\n"), ("many", pts)):
            with open(os.path.join(tmp, f"{k}.toml"), "w") as f:
                f.write(f'[inputs.kth]\nformat = "swf"\nlog = "{os.path.abspath(SAMPLE)}"\n' + text)
        rows = []
        for _ in range(a.rounds):
            s1 = sweep(cli, os.path.join(tmp, "one.toml"), os.path.join(tmp, "one"), 1)
            sn = sweep(cli, os.path.join(tmp, "many.toml"), os.path.join(tmp, "many"), 1)
            l1 = loop(cli, SAMPLE, policies_of(os.path.join(tmp, "one")), os.path.join(tmp, "l"), threads=1)
            ln = loop(cli, SAMPLE, policies_of(os.path.join(tmp, "many")), os.path.join(tmp, "l"), threads=1)
            rows.append((s1, sn, l1, ln, (sn - s1 - (ln - l1)) / (n - 1)))
        per = [r[4] for r in rows]
        s1 = min(r[0] for r in rows)
        print(f"per-point cost on the 3,000-job sample, one worker, {a.rounds} rounds:")
        print(f"  sweep of 1 point {s1:.3f} s (the fixed start), of {n} points {min(r[1] for r in rows):.3f} s; "
              f"loop of 1: {min(r[2] for r in rows):.3f} s, of {n}: {min(r[3] for r in rows):.3f} s")
        print(f"  sweep machinery per point: {1e3 * statistics.median(per):.1f} ms median "
              f"({1e3 * min(per):.1f} to {1e3 * max(per):.1f} ms)")


if __name__ == "__main__":
    main()
