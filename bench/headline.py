#!/usr/bin/python3
"""BENCHMARKS.md's current table: the headline figures, each with the command that reproduces it and the
baseline it is a ratio to, measured in one run so that the ratios compare like with like.

    /usr/bin/python3 bench/headline.py run [--build build/release] [--rounds 3] [--only NAME ...]
    /usr/bin/python3 bench/headline.py render            # BENCHMARKS.md's table from bench/headline.json

`run` measures every entry whose inputs are on this machine (the real logs under
../shared/datasets/raw, or $COLMATCH_RAW), each round alternating the command and its baseline, and
keeps the minimum of the rounds; it records the figures with the date, commit and machine in
bench/headline.json and then renders. An entry whose inputs are missing keeps its recorded figures (its
date and commit say when they were measured). `render` rewrites only the block between the markers in
BENCHMARKS.md.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import platform
import shlex
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
RAW = pathlib.Path(os.environ.get("COLMATCH_RAW", ROOT.parent / "shared" / "datasets" / "raw"))
STORE = ROOT / "bench" / "headline.json"
BEGIN, END = "<!-- BEGIN generated: bench/headline.py render -->", "<!-- END generated -->"
PWA = "parallel-workloads-archive"
G11 = "google-clusterdata-2011-2"


def swf_replay(name: str, log: str, policy: str, what: str) -> dict:
    """A whole `simulate` of a Parallel Workloads Archive log, against bench/fcfs_baseline.py on it."""
    path = "{raw}/" + PWA + "/" + log
    return dict(name=name, what=what,
                cmd="{cli} simulate --format swf --log " + path + " --policy {root}/datasets/examples/" + policy +
                    " --out {out}",
                base="/usr/bin/python3 {root}/bench/fcfs_baseline.py " + path + " {out}.csv",
                base_what="Python FCFS over one pool (bench/fcfs_baseline.py)", inputs=[PWA + "/" + log])


# name, what it measures, the command ({cli}, {raw}, {out}, {root}), the baseline command or None, inputs
ENTRIES = [
    swf_replay("kth-easy", "KTH-SP2-1996-2.1-cln.swf.gz", "easy.toml",
               "KTH SP2 whole log (28,476 jobs), EASY: whole `simulate`"),
    swf_replay("ricc-easy", "RICC-2010-2.swf.gz", "easy.toml", "RICC whole log (447,794 jobs), EASY: whole `simulate`"),
    swf_replay("ricc-conservative", "RICC-2010-2.swf.gz", "conservative.toml",
               "RICC whole log, conservative backfill: whole `simulate`"),
    dict(name="google-match", what="Google 2011 part 0 (190,926 tasks x 12,476 machines): whole `match`",
         cmd="{cli} match --format google2011 --machines {raw}/" + G11 + "/machine_events/part-00000-of-00001.csv.gz "
             "--tasks {raw}/" + G11 + "/task_events/part-00000-of-00500.csv.gz --out {out} --threads 2",
         base=None, base_what="", inputs=[G11 + "/machine_events/part-00000-of-00001.csv.gz"]),
    dict(name="sample-match", what="bundled Google sample (datasets/samples): whole `match`",
         cmd="{cli} match --format google2011 --machines {root}/datasets/samples/google_machine_events.csv.gz "
             "--tasks {root}/datasets/samples/google_task_events_job_mod25.csv.gz --out {out} --threads 2",
         base=None, base_what="", inputs=[]),
    dict(name="slurm-c10k", what="Slurm main pass, 10,000 nodes, 520 jobs (datasets/slurm c10k-batch): whole `match`",
         cmd="{cli} match --format slurm --dump {root}/datasets/slurm/c10k --jobs {root}/datasets/slurm/c10k-batch.jobs "
             "--out {out} --threads 2",
         base=None, base_what="", inputs=[]),
]


def timed(cmd: str) -> tuple[float, str]:
    t = time.perf_counter()
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    s = time.perf_counter() - t
    if r.returncode not in (0, 2):
        raise RuntimeError(f"{cmd}: exit {r.returncode}: {r.stderr.strip()[-400:]}")
    return s, r.stdout


def available(e: dict) -> bool:
    return all((RAW / i).exists() for i in e["inputs"]) and all(
        (ROOT / p).exists() for p in shlex.split(e["cmd"].format(cli="", raw=RAW, out="x", root=ROOT))
        if p.startswith(str(ROOT / "datasets")))


def run(build: pathlib.Path, rounds: int, only: list[str]) -> None:
    store = json.loads(STORE.read_text()) if STORE.exists() else {}
    cli = build / "tools" / "colmatch"
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")),
               platform.machine())
    machine = f"{os.cpu_count()} cores of {cpu}"
    today = datetime.date.today().isoformat()
    for e in ENTRIES:
        if only and e["name"] not in only:
            continue
        if not available(e):
            print(f"headline: {e['name']}: inputs missing, keeping the recorded figures", file=sys.stderr)
            continue
        with tempfile.TemporaryDirectory() as tmp:
            cmd_s, base_s, summary = [], [], ""
            for r in range(rounds):
                out = f"{tmp}/r{r}"
                s, summary = timed(e["cmd"].format(cli=cli, raw=RAW, out=out, root=ROOT))
                cmd_s.append(s)
                if e["base"]:
                    base_s.append(timed(e["base"].format(raw=RAW, out=out, root=ROOT))[0])
        try:
            core = json.loads(summary).get("seconds", {})
        except json.JSONDecodeError:
            core = {}
        store[e["name"]] = dict(seconds=min(cmd_s), baseline=min(base_s) if base_s else None,
                                core=core.get("match_total", core.get("simulate")),
                                rounds=rounds, date=today, commit=commit, machine=machine)
        print(f"headline: {e['name']}: {min(cmd_s):.3f} s", file=sys.stderr)
    STORE.write_text(json.dumps(store, indent=1, sort_keys=True) + "\n")
    render()


def table() -> str:
    store = json.loads(STORE.read_text()) if STORE.exists() else {}
    rows = ["| figure | whole command | engine part | baseline, same run | measured | command |",
            "|---|---:|---:|---|---|---|"]
    for e in ENTRIES:
        f = store.get(e["name"])
        if not f:
            continue
        core = f"{f['core']:.3f} s" if f.get("core") is not None else ""
        base = ""
        if f.get("baseline"):
            base = f"{f['baseline']:.2f} s, **{f['seconds'] / f['baseline']:.2f}x** ({e['base_what']})"
        cmd = e["cmd"].format(cli="colmatch", raw="$RAW", out="OUT", root=".")
        rows.append(f"| {e['what']} | {f['seconds']:.2f} s | {core} | {base} | {f['date']}, {f['commit']}, "
                    f"min of {f['rounds']} | `{cmd}` |")
    machine = next((f["machine"] for f in store.values()), "")
    return "\n".join(rows) + f"\n\nMachine: {machine}; `$RAW` is `../shared/datasets/raw`. Engine part: " \
        "summary.json's `match_total` (match) or `simulate` (the scheduling loop).\n"


def render() -> None:
    path = ROOT / "BENCHMARKS.md"
    text = path.read_text()
    i, j = text.find(BEGIN), text.find(END)
    if i < 0 or j < i:
        raise SystemExit(f"{path}: no block between {BEGIN} and {END}")
    path.write_text(text[:i + len(BEGIN)] + "\n" + table() + text[j:])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=["run", "render"])
    ap.add_argument("--build", type=pathlib.Path, default=ROOT / "build" / "release")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", nargs="*", default=[])
    a = ap.parse_args()
    run(a.build, a.rounds, a.only) if a.what == "run" else render()


if __name__ == "__main__":
    main()
