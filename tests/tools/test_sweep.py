"""colmatch sweep (tools/sweep.py) on Dask distributed: a real cluster on this machine (dask-scheduler and two
dask-worker processes on loopback) against direct `colmatch simulate` runs byte for byte, a worker killed
mid-sweep, the embedded LocalCluster, resuming, shipped inputs, failing points and bad sweep files.
Run by ctest (label python) with COLMATCH_CLI, COLMATCH_SOURCE_DIR and PYTHONPATH (the module) set."""
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

import pytest

SRC = os.environ.get("COLMATCH_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.environ["COLMATCH_CLI"]
KTH = os.path.join(SRC, "datasets", "samples", "kth_sp2_head3000.swf.gz")
sys.path.insert(0, os.path.join(SRC, "tools"))
import sweep as sweep_py  # noqa: E402  (tools/sweep.py: the CLI's script)
import sweep_spec as spec_py  # noqa: E402  (tools/sweep_spec.py: the sweep file)


def cli(*args, check=False, **kw):
    return subprocess.run([CLI, *args], check=check, capture_output=True, text=True, **kw)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def sweep_rows(out):
    import csv

    with open(os.path.join(out, "sweep.csv"), newline="") as f:
        return list(csv.DictReader(f))


GRID_2X3 = """
[inputs.kth]
format = "swf"
log = "{log}"

[grid]
backfill = ["none", "easy"]
"priority.queue_time" = [0, 1, 10]
"""


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def direct_metrics(tmp, backfill, queue_time, log=KTH):
    """metrics.json of `colmatch simulate` run by hand with the point's policy."""
    policy = write(os.path.join(tmp, f"p-{backfill}-{queue_time}.toml"),
                   f'[policy]\nbackfill = "{backfill}"\n[policy.priority]\nqueue_time = {queue_time}\n')
    out = os.path.join(tmp, f"direct-{backfill}-{queue_time}")
    r = cli("simulate", "--format", "swf", "--log", log, "--policy", policy, "--out", out)
    assert r.returncode == 0, r.stderr
    return read(os.path.join(out, "metrics.json"))


def swf_log(path, jobs, nodes=64, seed=1):
    """A synthetic SWF log: long enough that a point takes about a second."""
    r = random.Random(seed)
    with open(path, "w") as f:
        f.write(f"; MaxJobs: {jobs}\n; MaxRecords: {jobs}\n; MaxNodes: {nodes}\n; MaxProcs: {nodes}\n")
        t = 0
        for j in range(1, jobs + 1):
            t += r.randint(0, 60)
            run = r.randint(10, 5000)
            procs = r.choice([1, 1, 2, 4, 8, 16, 32])
            f.write(f"{j} {t} -1 {run} {procs} -1 -1 {procs} {run * 2} -1 1 {r.randint(1, 30)} 1 -1 "
                    f"{r.randint(1, 3)} -1 -1 -1\n")
    return path


def big_sweep(tmp_path, jobs, intervals):
    """A sweep file over a synthetic log of `jobs` jobs: backfill none/easy x the intervals."""
    log = swf_log(str(tmp_path / "big.swf"), jobs)
    return write(tmp_path / "sweep.toml", f"""
[inputs.big]
format = "swf"
log = "{log}"

[grid]
backfill = ["none", "easy"]
interval = {intervals}
""")


class Cluster:
    """dask-scheduler and two dask-worker processes (each with its nanny) on 127.0.0.1."""

    def __init__(self, tmp):
        self.file = os.path.join(tmp, "scheduler.json")
        common = ["--no-dashboard"]
        self.scheduler = subprocess.Popen(
            ["dask-scheduler", "--host", "127.0.0.1", "--port", "0", "--scheduler-file", self.file] + common,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while not os.path.exists(self.file):
            assert time.monotonic() < deadline and self.scheduler.poll() is None, "dask-scheduler did not start"
            time.sleep(0.05)
        time.sleep(0.1)  # written whole
        with open(self.file) as f:
            self.address = json.load(f)["address"]
        self.workers = [subprocess.Popen(
            ["dask-worker", "--scheduler-file", self.file, "--nworkers", "1", "--nthreads", "1", "--host",
             "127.0.0.1"] + common, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(2)]
        self.wait_workers(2)

    def wait_workers(self, n):
        from distributed import Client

        with Client(self.address, timeout="30s") as c:
            c.wait_for_workers(n, timeout=60)

    def close(self):
        for p in self.workers + [self.scheduler]:
            p.send_signal(signal.SIGTERM)
        for p in self.workers + [self.scheduler]:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()


@pytest.fixture(scope="module")
def cluster():
    with tempfile.TemporaryDirectory() as tmp:
        c = Cluster(tmp)
        try:
            yield c
        finally:
            c.close()


def test_real_cluster_points_equal_direct_runs(cluster, tmp_path):
    spec = write(tmp_path / "sweep.toml", GRID_2X3.format(log=KTH))
    out = tmp_path / "out"
    r = cli("sweep", str(spec), "--out", str(out), "--scheduler", cluster.address)
    assert r.returncode == 0, r.stderr
    assert "6 points, 6 ok" in r.stdout
    rows = sweep_rows(out)
    assert len(rows) == 6 and len({row["point"] for row in rows}) == 6
    seen = set()
    for row in rows:
        assert row["status"] == "ok" and row["reused"] == "false", row
        bf, qt = row["backfill"], row["priority.queue_time"]
        seen.add((bf, qt))
        got = read(out / "runs" / row["point"] / "metrics.json")
        assert got == direct_metrics(str(tmp_path), bf, qt), f"point {row['point']} ({bf}, {qt})"
        metrics = json.loads(got)
        assert float(row["wait_mean"]) == pytest.approx(metrics["wait_seconds"]["mean"])
        assert float(row["utilisation"]) == pytest.approx(metrics["utilisation"])
        assert int(row["started"]) == 3000
    assert seen == {(b, q) for b in ("none", "easy") for q in ("0", "1", "10")}
    easy = [float(r["wait_mean"]) for r in rows if r["backfill"] == "easy"]
    strict = [float(r["wait_mean"]) for r in rows if r["backfill"] == "none"]
    assert max(easy) < min(strict), "EASY waits less on this log"


def _colmatch_children(pids):
    import psutil

    found = []
    for pid in pids:
        try:
            for c in psutil.Process(pid).children(recursive=True):
                if c.name() == "colmatch":
                    found.append(c)
        except psutil.NoSuchProcess:
            pass
    return found


def test_worker_killed_mid_sweep_loses_no_point(cluster, tmp_path):
    import psutil

    spec = big_sweep(tmp_path, 100_000, [0, 60])
    out = tmp_path / "out"
    sweep = subprocess.Popen([CLI, "sweep", str(spec), "--out", str(out), "--scheduler", cluster.address],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    victim = None
    deadline = time.monotonic() + 60
    while victim is None and time.monotonic() < deadline and sweep.poll() is None:
        runs = _colmatch_children([w.pid for w in cluster.workers])
        if runs:
            victim = runs[0]
            worker = victim.parent()  # setpriv exec'd colmatch: its parent is the worker process itself
            os.kill(worker.pid, signal.SIGKILL)
        time.sleep(0.01)
    assert victim is not None, f"no point was seen running on a worker (the sweep's exit status: {sweep.poll()})"
    stdout, stderr = sweep.communicate(timeout=300)
    assert sweep.returncode == 0, stderr
    # the killed worker's run died with it (PR_SET_PDEATHSIG), not left to finish on its own
    try:
        victim.wait(timeout=10)
    except psutil.TimeoutExpired:
        pytest.fail("the run of the killed worker is still running")
    rows = sweep_rows(out)
    assert len(rows) == 4 and len({r["point"] for r in rows}) == 4, rows
    assert all(r["status"] == "ok" and int(r["started"]) == 100_000 for r in rows), rows
    runs = os.listdir(out / "runs")
    assert sorted(n for n in runs if not n.startswith(".")) == sorted(r["point"] for r in rows)
    assert not [n for n in runs if ".new-" in n], f"a partial run folder is left: {runs}"
    for r in rows:
        assert sweep_py.complete(str(out / "runs" / r["point"]), spec_py.POINT_FILES["simulate"])
    cluster.wait_workers(2)  # the nanny restarted its worker: the next test has two again


def test_local_cluster_by_default_and_from_python(tmp_path):
    import colmatch

    spec = {"inputs": {"kth": {"format": "swf", "log": KTH}},
            "grid": {"backfill": ["none", "easy"]}}
    df = colmatch.sweep(spec, out=tmp_path / "out", workers=2, cli=CLI)
    assert list(df["status"]) == ["ok", "ok"] and list(df["backfill"]) == ["none", "easy"]
    assert df["wait_mean"].dtype.kind == "f" and df["wait_mean"].iloc[1] < df["wait_mean"].iloc[0]
    for _, row in df.iterrows():
        assert read(tmp_path / "out" / "runs" / row["point"] / "metrics.json") == \
            direct_metrics(str(tmp_path), row["backfill"], 0)
    with pytest.raises(colmatch.SweepError) as e:
        colmatch.sweep({"inputs": {"kth": {"format": "swf", "log": KTH}}, "grid": {"backfil": ["easy"]}},
                       out=tmp_path / "bad", cli=CLI)
    assert e.value.key == "grid.backfil" and not (tmp_path / "bad").exists()
    assert os.stat(tmp_path / ".out.lock").st_mode & 0o777 == 0o644, "a shared folder's lock: readable by all"


def test_interrupted_sweep_resumes_and_skips_complete_points(tmp_path):
    spec = big_sweep(tmp_path, 60_000, [0, 30, 60])
    out = tmp_path / "out"
    first = subprocess.Popen([CLI, "sweep", str(spec), "--out", str(out), "--workers", "1"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and first.poll() is None:
        done = [n for n in os.listdir(out / "runs")] if (out / "runs").exists() else []
        if [n for n in done if not n.startswith(".")]:
            break
        time.sleep(0.02)
    first.send_signal(signal.SIGINT)
    _, err = first.communicate(timeout=60)
    assert first.returncode == 130, err
    assert "run the same sweep again to resume" in err
    kept = {n: os.stat(out / "runs" / n).st_ino for n in os.listdir(out / "runs") if not n.startswith(".")}
    assert 1 <= len(kept) < 6, kept
    assert not (out / "sweep.csv").exists()
    second = cli("sweep", str(spec), "--out", str(out), "--workers", "2")
    assert second.returncode == 0, second.stderr
    assert f"({len(kept)} from an earlier run)" in second.stdout
    rows = sweep_rows(out)
    assert len(rows) == 6
    for r in rows:
        assert r["status"] == "ok"
        assert r["reused"] == ("true" if r["point"] in kept else "false"), r
    for n, ino in kept.items():
        assert os.stat(out / "runs" / n).st_ino == ino, f"{n} was run again"
    assert not [n for n in os.listdir(out / "runs") if ".new-" in n]
    third = cli("sweep", str(spec), "--out", str(out))
    assert third.returncode == 0 and "6 ok (6 from an earlier run)" in third.stdout, third.stdout


def test_shipped_inputs_give_the_same_runs(tmp_path):
    spec = write(tmp_path / "sweep.toml", GRID_2X3.format(log=KTH).replace('"priority.queue_time" = [0, 1, 10]', ""))
    a, b = tmp_path / "shared", tmp_path / "shipped"
    assert cli("sweep", str(spec), "--out", str(a), "--workers", "2").returncode == 0
    r = cli("sweep", str(spec), "--out", str(b), "--workers", "2", "--ship-inputs")
    assert r.returncode == 0, r.stderr
    for row in sweep_rows(a):
        assert sorted(os.listdir(a / "runs" / row["point"])) == sorted(os.listdir(b / "runs" / row["point"]))
        for f in ("metrics.json", "schedule.csv"):
            assert read(a / "runs" / row["point"] / f) == read(b / "runs" / row["point"] / f), f
    assert [r["point"] for r in sweep_rows(a)] == [r["point"] for r in sweep_rows(b)]


def test_a_failing_point_is_a_row_and_the_others_run(tmp_path):
    spec = write(tmp_path / "sweep.toml", f"""
[inputs.kth]
format = "swf"
log = "{KTH}"

[grid]
backfill = ["easy", "sideways"]

[[point]]
interval = -5
""")
    out = tmp_path / "out"
    r = cli("sweep", str(spec), "--out", str(out), "--workers", "2")
    assert r.returncode == 2, r.stderr
    rows = {(row["backfill"], row["interval"]): row for row in sweep_rows(out)}
    assert rows[("easy", "")]["status"] == "ok"
    bad = rows[("sideways", "")]
    assert bad["status"] == "failed" and "field 'policy.backfill': expected none, easy, conservative or greedy" in bad["error"], bad
    assert bad["wait_mean"] == "" and not (out / "runs" / bad["point"]).exists()
    assert rows[("", "-5")]["status"] == "failed" and "policy.interval" in rows[("", "-5")]["error"]
    assert "failed: " in r.stderr


BAD_FILES = [
    ("unknown key", '[inputs.k]\nformat = "swf"\nlog = "{log}"\n[grid]\nbackfil = ["easy"]\n', 5, "grid.backfil",
     "unknown policy key"),
    ("unknown nested key", '[inputs.k]\nformat = "swf"\nlog = "{log}"\n[grid.priority]\nage = [1, 2]\n', 5,
     "grid.priority.age", "unknown policy key"),
    ("empty list", '[inputs.k]\nformat = "swf"\nlog = "{log}"\n[grid]\nbackfill = []\n', 5, "grid.backfill",
     "empty list"),
    ("no points", '[inputs.k]\nformat = "swf"\nlog = "{log}"\n', 0, "grid", "no points"),
    ("wrong type", '[inputs.k]\nformat = "swf"\nlog = "{log}"\n\n[grid]\ninterval = [0, "60"]\n', 6,
     "grid.interval", "expected a number"),
    ("wrong type in a point", '[inputs.k]\nformat = "swf"\nlog = "{log}"\n[[point]]\nbackfill = 1\n', 5,
     "point[0].backfill", "expected a string"),
    ("not a list", '[inputs.k]\nformat = "swf"\nlog = "{log}"\n[grid]\nbackfill = "easy"\n', 5, "grid.backfill",
     "expected a list"),
    ("unreadable input", '[inputs.k]\nformat = "swf"\nlog = "missing.swf"\n[grid]\nbackfill = ["easy"]\n', 3,
     "inputs.k.log", "no such file"),
    ("no inputs", '[grid]\nbackfill = ["easy"]\n', 0, "inputs", "expected one or more"),
    ("unknown top-level key", 'comand = "simulate"\n[inputs.k]\nlog = "{log}"\n', 1, "comand", "unknown key"),
    ("point for no input", '[inputs.k]\nformat = "swf"\nlog = "{log}"\n[[point]]\ninput = "x"\n', 5,
     "point[0].input", "no input 'x'"),
    ("until with match", 'command = "match"\nuntil = 5\n[inputs.k]\nlog = "{log}"\n', 2, "until", "expected a number"),
    ("unknown format", '[inputs.k]\nformat = "swff"\nlog = "{log}"\n[grid]\nbackfill = ["easy"]\n', 2,
     "inputs.k.format", "unknown format 'swff' (colmatch simulate takes native,"),
    ("unknown input option", '[inputs.k]\nformat = "swf"\nlgo = "{log}"\n[grid]\nbackfill = ["easy"]\n', 3,
     "inputs.k.lgo", "not an input option of colmatch"),
    ("unknown base policy key", '[inputs.k]\nformat = "swf"\nlog = "{log}"\n[policy]\nbackfil = "easy"\n'
     '[grid]\ninterval = [0]\n', 5, "policy.backfil", "unknown policy key"),
    ("write with match", 'command = "match"\nwrite = "metrics"\n[inputs.k]\nlog = "{log}"\n', 2, "write",
     "expected schedule, metrics, all"),
    ("unknown write", 'write = "everything"\n[inputs.k]\nformat = "swf"\nlog = "{log}"\n[grid]\nbackfill = ["easy"]\n',
     1, "write", "expected schedule, metrics, all"),
    ("TOML syntax", '[inputs.k]\nformat = "swf"\nlog = "{log}"\n[grid\n', 4, "", "Expected ']'"),
]


@pytest.mark.parametrize("name,text,line,key,why", BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_bad_sweep_files_name_file_line_and_key_and_write_nothing(tmp_path, name, text, line, key, why):
    spec = write(tmp_path / "sweep.toml", text.format(log=KTH))
    out = tmp_path / "out"
    r = cli("sweep", str(spec), "--out", str(out))
    assert r.returncode == 1, (r.stdout, r.stderr)
    where = f"{spec}:{line}: " if line else f"{spec}: "
    assert r.stderr.startswith(f"colmatch: error: {where}"), r.stderr
    assert (f"field '{key}': " in r.stderr) if key else ("field" not in r.stderr), r.stderr
    assert why in r.stderr, r.stderr
    assert not out.exists(), "nothing is written for a sweep that cannot start"


# One example of every kind of key the sweep lets a grid name, with a value of its type that colmatch takes:
# a key that colmatch does not read (or reads with another type) fails here, not in the middle of a sweep.
POLICY_KEYS = {
    "interval": 60, "min_interval": 5, "scheduler": "fbsng", "allocation": "best_fit", "backfill": "conservative",
    "reservation_depth": 3, "compression": True,
    "resource_availability": "utilized", "throttle": [{"credential": "user", "max_jobs": 2}],
    "priority.credential": 1, "priority.queue_time": 2, "priority.expansion": 0.5, "priority.size": 1,
    "credential_priority.qos.high": 1000, "credential_priority.user.alice": 10,
    "fbsng.process_type": "account", "fbsng.queues.bulk.QPmin": 1, "fbsng.queues.bulk.QPmax": 100,
    "fbsng.queues.bulk.QPI": 1, "fbsng.queues.bulk.QPD": 2, "fbsng.queues.bulk.QPG": 3, "fbsng.queues.bulk.SPG": 4,
    "fbsng.process_types.t.max_sections": 3, "fbsng.process_types.t.max_slots": 8,
    "fbsng.process_types.t.requirements": "", "fbsng.process_types.t.max.slots": 4,
    "vov.wrappers": ["vov"], "vov.dollars.BIG": "RAMTOTAL#64000", "vov.symbols.OS": "linux64",
    "backfill_interval": 30, "backfill_phase": "slurm", "backfill_window": 3600, "backfill_max_jobs": 100,
    "backfill_resolution": 60, "backfill_min_age_reserve": 30,
    "slurm.SchedulerType": "sched/builtin", "slurm.SchedulerParameters": "bf_interval=60",
    "slurm.PriorityType": "priority/multifactor", "slurm.PriorityWeightAge": 1000,
    "slurm.PriorityWeightFairshare": 2000, "slurm.PriorityWeightJobSize": 10, "slurm.PriorityMaxAge": "1-0",
    "slurm.PriorityDecayHalfLife": "7-0", "slurm.PriorityCalcPeriod": 5, "slurm.PriorityFavorSmall": True,
    "slurm.PriorityWeightPartition": 0, "slurm.PriorityWeightQOS": 0, "slurm.PriorityWeightAssoc": 0,
    "slurm.PriorityWeightTRES": "(null)", "slurm.PriorityFlags": "", "slurm.PriorityUsageResetPeriod": "NONE",
    "slurm.AccountingStorageType": "accounting_storage/slurmdbd", "slurm.priority_calc_phase": 30,
    "slurm.associations": [{"account": "p1", "shares": 2}],
}
# keys colmatch reads only beside another
COMPANIONS = {"reservation_depth": {"backfill": "easy"}, "compression": {"backfill": "conservative"}}


def test_every_grid_key_is_one_colmatch_reads(tmp_path):
    for dotted, value in POLICY_KEYS.items():
        key = tuple(dotted.split("."))
        kind = spec_py.policy_key_type(key)
        assert kind is not None, dotted
        assert spec_py._type_ok(value, kind), dotted
        policy = dict(COMPANIONS.get(dotted, {}))
        spec_py._set_path(policy, key, value)
        path = write(tmp_path / "p.toml", spec_py.policy_toml(policy))
        r = cli("simulate", "--format", "swf", "--log", KTH, "--policy", str(path), "--until", "0",
                "--out", str(tmp_path / "o"))
        assert r.returncode == 0, f"{dotted}: {r.stderr}"
    assert spec_py.policy_key_type(("priority", "age")) is None
    assert spec_py.policy_key_type(("fbsng", "queues", "bulk", "QPX")) is None


def test_point_ids_are_stable_and_depend_on_what_runs(tmp_path):
    text = GRID_2X3.format(log=KTH)
    a = spec_py.load_spec(write(tmp_path / "a.toml", text))
    b = spec_py.load_spec(write(tmp_path / "b.toml", text.replace("[0, 1, 10]", "[10, 0]")))
    ids_a = {(p.params["backfill"], p.params["priority.queue_time"]): p.id for p in a.points}
    ids_b = {(p.params["backfill"], p.params["priority.queue_time"]): p.id for p in b.points}
    assert len(set(ids_a.values())) == 6
    assert all(ids_b[k] == ids_a[k] for k in ids_b), "the same point keeps its id when the grid changes"
    c = spec_py.load_spec(write(tmp_path / "c.toml", text + "[policy]\ninterval = 60\n"))
    assert not set(p.id for p in c.points) & set(ids_a.values()), "another base policy is another run"
    import shutil

    log = tmp_path / "kth.swf.gz"
    shutil.copy(KTH, log)
    d = spec_py.load_spec(write(tmp_path / "d.toml", GRID_2X3.format(log=log)))
    os.utime(log, ns=(0, os.stat(log).st_mtime_ns + 10**9))  # the log replaced by another of the same name
    e = spec_py.load_spec(write(tmp_path / "e.toml", GRID_2X3.format(log=log)))
    assert not set(p.id for p in d.points) & set(p.id for p in e.points), "a changed input is another run"


def test_write_chooses_what_each_point_keeps_and_its_id_stays(tmp_path):
    """A sweep writes what its report reads by default (simulate --write schedule: metrics.json, summary.json,
    schedule.csv; not the timeline and cycles of every point); `write = "metrics"` keeps the JSON only,
    `all` everything. The metrics are the same bytes whichever, and which files a point writes is not part
    of its id: a point written with more is complete for a sweep asking fewer (issue 46 item 3)."""
    grid = GRID_2X3.format(log=KTH).replace('"priority.queue_time" = [0, 1, 10]', "")
    files = {}
    for write_as in ("", "metrics", "all"):
        text = (f'write = "{write_as}"\n' if write_as else "") + grid
        spec = write(tmp_path / f"sweep-{write_as or 'default'}.toml", text)
        out = tmp_path / f"out-{write_as or 'default'}"
        r = cli("sweep", str(spec), "--out", str(out), "--workers", "2")
        assert r.returncode == 0, r.stderr
        rows = sweep_rows(out)
        assert [row["status"] for row in rows] == ["ok", "ok"]
        files[write_as] = {row["point"]: sorted(os.listdir(out / "runs" / row["point"])) for row in rows}
        for row in rows:
            assert read(out / "runs" / row["point"] / "metrics.json") == direct_metrics(str(tmp_path), row["backfill"], 0)
        report = cli("report", str(out))
        assert report.returncode == 0, report.stderr
    assert files[""].keys() == files["metrics"].keys() == files["all"].keys(), "the same ids"
    for point in files[""]:
        assert files[""][point] == ["metrics.json", "schedule.csv", "summary.json"]
        assert files["metrics"][point] == ["metrics.json", "summary.json"]
        assert files["all"][point] == ["cycles.csv", "metrics.json", "schedule.csv", "summary.json", "timeline.csv"]
    # the default's points are complete for a metrics-only sweep of the same grid in the same folder
    spec = write(tmp_path / "again.toml", 'write = "metrics"\n' + grid)
    r = cli("sweep", str(spec), "--out", str(tmp_path / "out-default"))
    assert r.returncode == 0 and "2 ok (2 from an earlier run)" in r.stdout, r.stdout
    # and a metrics-only folder's points are run again for the default (no schedule.csv)
    spec = write(tmp_path / "more.toml", grid)
    r = cli("sweep", str(spec), "--out", str(tmp_path / "out-metrics"))
    assert r.returncode == 0 and "(2 from an earlier run)" not in r.stdout, r.stdout


def test_a_dump_folder_is_an_input_and_a_changed_file_in_it_makes_new_points(tmp_path):
    """A Slurm what-if sweeps over a dump folder (--dump) and a sacct file; a file of the folder replaced
    is another run, as a replaced log is."""
    import shutil

    dump = tmp_path / "dump"
    shutil.copytree(os.path.join(SRC, "datasets", "slurm", "run16-fairshare", "dump"), dump)
    sacct = os.path.join(SRC, "datasets", "slurm", "run16-fairshare", "sacct.txt")
    text = (f'[inputs.fs]\nformat = "slurm"\ndump = "{dump}"\naccounting = "{sacct}"\n'
            '[grid]\n"slurm.PriorityWeightFairshare" = [0, 2000]\n'
            '"slurm.SchedulerParameters" = ["bf_interval=10", "bf_interval=30"]\n')
    a = spec_py.load_spec(write(tmp_path / "a.toml", text))
    assert len(a.points) == 4
    conf = dump / "scontrol-config.txt"
    os.utime(conf, ns=(0, os.stat(conf).st_mtime_ns + 10**9))
    b = spec_py.load_spec(write(tmp_path / "b.toml", text))
    assert not set(p.id for p in a.points) & set(p.id for p in b.points), "a changed dump is another run"
    r = cli("sweep", str(write(tmp_path / "c.toml", text.replace(str(dump), str(tmp_path / "nowhere")))),
            "--out", str(tmp_path / "o"))
    assert r.returncode == 1 and "no such file" in r.stderr, r.stderr


def test_private_folders_of_dead_runs_are_cleared_and_live_ones_kept(tmp_path):
    import fcntl

    runs = tmp_path / "runs"
    (runs / ".kth-dead.new-1a2b").mkdir(parents=True)
    (runs / ".kth-dead.new-1a2b" / "schedule.csv").write_text("job\n")
    (runs / ".kth-dead.lock").write_text("")
    (runs / ".kth-live.new-3c4d").mkdir()
    (runs / "kth-done").mkdir()
    fd = os.open(runs / ".kth-live.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)  # a run writing now, as colmatch's OutputSet holds it
    try:
        sweep_py._clear_stale(str(runs))
    finally:
        os.close(fd)
    assert sorted(os.listdir(runs)) == [".kth-dead.lock", ".kth-live.lock", ".kth-live.new-3c4d", "kth-done"]


def test_mutated_sweep_files_give_a_sweep_or_a_sweep_error(tmp_path):
    """A bounded, seeded fuzz of the sweep file's reader: 3,000 mutations of a valid file (bytes flipped,
    cut, repeated; TOML tokens inserted) either load or raise SweepError, never another exception."""
    seed_text = (GRID_2X3.format(log=KTH) + '\n[policy]\ninterval = 5\n[[point]]\ninput = "kth"\n'
                 '"fbsng.queues.q.QPD" = 2\nthrottle = [{credential = "user", max_jobs = 1}]\n').encode()
    tokens = [b"[", b"]", b"[[", b"]]", b"=", b'"', b".", b",", b"\n", b"{", b"}", b"grid", b"point", b"inputs",
              b"[]", b"1e999", b"-0", b"nan", b"true", b"\xff", b"\\u0000", b"'''", b"#"]
    r = random.Random(30)
    path = tmp_path / "fuzz.toml"
    loaded = refused = 0
    for _ in range(3000):
        data = bytearray(seed_text)
        for _ in range(r.randint(1, 4)):
            at = r.randrange(len(data) + 1)
            op = r.randrange(4)
            if op == 0 and data:
                data[min(at, len(data) - 1)] = r.randrange(256)
            elif op == 1:
                del data[at:at + r.randint(1, 20)]
            elif op == 2:
                data[at:at] = r.choice(tokens)
            else:
                data[at:at] = data[at:at + r.randint(1, 30)]
        path.write_bytes(bytes(data))
        try:
            spec_py.load_spec(str(path))
            loaded += 1
        except spec_py.SweepError as e:
            assert str(e).startswith(str(path)), str(e)
            refused += 1
    assert loaded > 30 and refused > 100, (loaded, refused)  # both paths reached


def test_a_point_whose_metrics_are_corrupt_is_run_again_not_resumed(tmp_path):
    """Issue 45: a run folder with every file but a corrupt metrics.json was resumed as "ok" with empty
    figures; it is run again and its figures are the run's."""
    spec = write(tmp_path / "sweep.toml", GRID_2X3.format(log=KTH).replace('"priority.queue_time" = [0, 1, 10]', ""))
    out = tmp_path / "out"
    assert cli("sweep", str(spec), "--out", str(out), "--workers", "1").returncode == 0
    rows = sweep_rows(out)
    victim = rows[0]["point"]
    good = read(out / "runs" / victim / "metrics.json")
    for corrupt in (b"{\"wait_seconds\": {\"mean\": 1", b"\xff\xfe", b"[1, 2]"):
        with open(out / "runs" / victim / "metrics.json", "wb") as f:
            f.write(corrupt)
        r = cli("sweep", str(spec), "--out", str(out), "--workers", "1")
        assert r.returncode == 0, r.stderr
        assert "1 from an earlier run" in r.stdout, r.stdout
        again = {x["point"]: x for x in sweep_rows(out)}[victim]
        assert again["reused"] == "false" and again["wait_mean"] == rows[0]["wait_mean"] != "", again
        assert read(out / "runs" / victim / "metrics.json") == good


@pytest.mark.parametrize("address", ["garbage:::", "tcp://host", "tcp://h:99999", "nosuch://h:1", ""])
def test_a_bad_scheduler_address_is_refused_before_anything_is_written(tmp_path, address):
    spec = write(tmp_path / "sweep.toml", GRID_2X3.format(log=KTH))
    out = tmp_path / "out"
    r = cli("sweep", str(spec), "--out", str(out), "--scheduler", address)
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr and "colmatch: error: --scheduler" in r.stderr, r.stderr
    assert not out.exists()


def test_a_sweep_file_that_is_not_a_file_or_too_large_is_refused(tmp_path):
    """Issue 45: `colmatch sweep /dev/zero` grew without bound."""
    for path, why in (("/dev/zero", "not a regular file"), (str(tmp_path), "not a regular file")):
        r = cli("sweep", path, "--out", str(tmp_path / "out"), timeout=60)
        assert r.returncode == 1 and why in r.stderr, r.stderr
    big = tmp_path / "big.toml"
    with open(big, "wb") as f:
        f.write(b"# " + b"x" * (17 << 20) + b"\n")
    r = cli("sweep", str(big), "--out", str(tmp_path / "out"), timeout=60)
    assert r.returncode == 1 and "MiB: not a sweep file" in r.stderr, r.stderr
    assert not (tmp_path / "out").exists()


def test_a_script_that_calls_sweep_at_its_top_level_returns(tmp_path):
    """Issue 45: colmatch.sweep(...) at a script's top level, as the README shows it (no `if __name__`
    guard), never returned: every spawned Dask worker ran the script again."""
    script = tmp_path / "top.py"
    script.write_text(
        "import colmatch\n"
        f"df = colmatch.sweep({{'inputs': {{'kth': {{'format': 'swf', 'log': {KTH!r}}}}},\n"
        "                     'grid': {'backfill': ['none', 'easy']}}, out='out', workers=2)\n"
        "print('rows', len(df), list(df['status']))\n")
    r = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "rows 2 ['ok', 'ok']" in r.stdout, (r.stdout, r.stderr[-2000:])
    assert sys.modules["__main__"] is not None
