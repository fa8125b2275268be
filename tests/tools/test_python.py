"""The Python module colmatch against the CLI: the same inputs give the same results.csv, categories.csv
and schedule.csv row for row; the arrays view the engine's columns (read-only, no copy); bad input
raises colmatch.LoadError naming file, line and field. Run by ctest (label e2e) with PYTHONPATH set."""
import os
import subprocess
import tempfile
import threading

import numpy as np
import pandas as pd
import pytest

import colmatch

SRC = os.environ.get("COLMATCH_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.environ["COLMATCH_CLI"]
S = os.path.join(SRC, "datasets", "samples")
D = os.path.join(SRC, "datasets", "demo")

INPUTS = {
    "native": dict(farm=f"{D}/farm.toml", taskers=f"{D}/taskers.jsonl", jobs=f"{D}/jobs.jsonl"),
    "google2011": dict(machines=f"{S}/google_machine_events.csv.gz", tasks=f"{S}/google_task_events_job_mod25.csv.gz"),
    "openb": dict(nodes=f"{S}/openb_nodes.csv", pods=f"{S}/openb_pods_gpuspec20_head2000.csv"),
    "dirac": dict(resources=f"{D}/dirac/resources.json", jdl=f"{D}/dirac/jobs.jdl"),
}


def cli(command, fmt, inputs, out, *extra):
    args = [CLI, command, "--format", fmt] + [x for k, v in inputs.items() for x in (f"--{k}", v)]
    subprocess.run(args + ["--out", out] + list(extra), check=True, capture_output=True)


def read(path):
    return pd.read_csv(path, dtype=str, keep_default_na=False)


@pytest.mark.parametrize("fmt", sorted(INPUTS))
def test_match_equals_the_cli_row_for_row(fmt):
    r = colmatch.match(format=fmt, **INPUTS[fmt])
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        cli("match", fmt, INPUTS[fmt], out)
        pd.testing.assert_frame_equal(r.to_pandas(), read(f"{out}/results.csv"))
        pd.testing.assert_frame_equal(r.to_pandas("categories"), read(f"{out}/categories.csv"))
    assert len(r.status) == len(r.job_ids) == len(r.tasker) == len(r.reason) == len(r.slots)


def test_arrays_view_the_engines_columns():
    r = colmatch.match(**INPUTS["native"])
    for a, dtype in ((r.status, np.uint8), (r.tasker, np.uint32), (r.reason, np.uint8), (r.slots, np.uint32)):
        assert a.dtype == dtype
        assert not a.flags.writeable  # a view of the engine's column, not a copy to change
        assert not a.flags.owndata and a.base is not None
    frame = r.to_pandas().drop_duplicates("job")  # first row per job, in input order
    names = {"assigned": colmatch.ASSIGNED, "pending": colmatch.PENDING, "rejected": colmatch.REJECTED}
    assert [names[s] for s in frame["status"]] == list(r.status)
    for j, job in enumerate(r.job_ids):
        row = frame.iloc[j]
        assert row["job"] == job
        if r.status[j] == colmatch.ASSIGNED:
            assert r.tasker_names[r.tasker[j]] == row["tasker"]
        else:
            assert r.tasker[j] == colmatch.NO_TASKER
    status = r.status
    del r  # the arrays keep their run alive
    assert list(status) == [names[s] for s in frame["status"]]


def test_bad_input_raises_load_error_with_file_line_field():
    with tempfile.TemporaryDirectory() as tmp:
        bad = os.path.join(tmp, "taskers.jsonl")
        with open(bad, "w") as f:
            f.write('{"name": "a", "attrs": {"arch": "lx-amd64"}}\n{"name": "b", "attrs": {"slots": -1}}\n')
        with pytest.raises(colmatch.LoadError) as e:
            colmatch.match(farm=f"{D}/farm.toml", taskers=bad, jobs=f"{D}/jobs.jsonl")
        assert e.value.file == bad and e.value.line == 2 and e.value.field == "attrs.slots"
        assert isinstance(e.value, ValueError)
    with pytest.raises(ValueError):
        colmatch.match(format="nosuch", log="x")


def test_ctrl_c_ends_a_long_simulate_with_keyboard_interrupt(tmp_path):
    """Issue 28: a call with the GIL released could only be killed. A 600k-job EASY simulation (5 s here)
    is interrupted a second in: KeyboardInterrupt, at once."""
    import random
    import signal
    import subprocess
    import sys
    import time

    r = random.Random(1)
    log = tmp_path / "big.swf"
    with open(log, "w") as f:
        f.write("; MaxNodes: 64\n; MaxProcs: 64\n")
        t = 0
        for j in range(1, 600_001):
            t += r.randint(0, 60)
            run, procs = r.randint(10, 5000), r.choice([1, 1, 2, 4, 8, 16, 32])
            f.write(f"{j} {t} -1 {run} {procs} -1 -1 {procs} {run * 2} -1 1 {r.randint(1, 30)} 1 -1 1 -1 -1 -1\n")
    policy = tmp_path / "easy.toml"
    policy.write_text('[policy]\nbackfill = "easy"\n')
    code = ("import signal, sys, time, colmatch\n"
            "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
            "print('start', flush=True)\n"
            f"colmatch.simulate(format='swf', log={str(log)!r}, policy={str(policy)!r})\n"
            "print('finished', flush=True)\n")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "start"
    time.sleep(1.0)
    p.send_signal(signal.SIGINT)
    t0 = time.monotonic()
    out, err = p.communicate(timeout=60)
    assert "KeyboardInterrupt" in err and "finished" not in out, (out, err)
    assert time.monotonic() - t0 < 2.0, "interrupted at the next progress check, not at the end"


def test_a_keyword_the_format_does_not_take_is_an_error_naming_the_accepted_ones():
    with pytest.raises(TypeError) as e:
        colmatch.match(farm=f"{D}/farm.toml", taskrs=f"{D}/taskers.jsonl", jobs=f"{D}/jobs.jsonl")
    assert "unknown keyword 'taskrs' for format native (accepted: farm, hosts, taskers, jobs, policy" in str(e.value)
    with pytest.raises(TypeError, match="unknown keyword 'machine' for format swf"):
        colmatch.simulate(format="swf", log=f"{S}/kth_sp2_head3000.swf.gz", machine="m.txt")
    with pytest.raises(ValueError, match=r"unknown format 'nosuch' \(formats: native, "):
        colmatch.match(format="nosuch", log="x")


def test_a_policy_the_farm_cannot_take_raises_policy_error_naming_its_file():
    with tempfile.TemporaryDirectory() as tmp:
        policy = os.path.join(tmp, "policy.toml")
        with open(policy, "w") as f:
            f.write('[policy]\nscheduler = "fbsng"\n[policy.fbsng.process_types.x]\nmax = { gpu = 1 }\n')
        with pytest.raises(colmatch.PolicyError) as e:
            colmatch.simulate(format="swf", policy=policy, log=f"{S}/kth_sp2_head3000.swf.gz")
        assert str(e.value).startswith(policy + ": FBSNG process type 'x': quota on 'gpu'"), str(e.value)
        assert isinstance(e.value, ValueError) and not isinstance(e.value, colmatch.LoadError)


def test_simulate_equals_the_cli_schedule():
    log = dict(log=f"{S}/kth_sp2_head3000.swf.gz")
    with tempfile.TemporaryDirectory() as tmp:
        policy = os.path.join(tmp, "policy.toml")
        with open(policy, "w") as f:
            f.write('[policy]\nbackfill = "easy"\n')
        s = colmatch.simulate(format="swf", policy=policy, **log)
        out = os.path.join(tmp, "out")
        cli("simulate", "swf", log, out, "--policy", policy)
        pd.testing.assert_frame_equal(s.to_pandas(), read(f"{out}/schedule.csv"))
        pd.testing.assert_frame_equal(s.to_pandas("timeline"), read(f"{out}/timeline.csv"))
        cycles = s.to_pandas("cycles")  # wall-clock times differ run to run; the cycles per minute do not
        pd.testing.assert_frame_equal(cycles[["time", "cycles"]], read(f"{out}/cycles.csv")[["time", "cycles"]])
    assert s.start.dtype == np.float64 and not s.start.flags.writeable
    started = ~np.isnan(s.start)
    assert started.sum() == 3000 and (s.end[started] >= s.start[started]).all()
    assert 0 < s.metrics()["utilisation"] <= 1


def test_matches_run_in_threads_at_once():
    # the GIL is released while matching: two threads' runs overlap and give the same results
    results = [None, None]

    def run(i):
        results[i] = colmatch.match(format="google2011", **INPUTS["google2011"]).to_pandas()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    pd.testing.assert_frame_equal(results[0], results[1])


def test_two_threads_first_calls_do_not_deadlock():
    """Issue 45: the first arrays two threads made at once, before numpy was imported, hung both (one held
    the C++ static guard of NumPy's API while importing numpy, the other waited on it holding the GIL)."""
    import sys

    code = ("import sys, threading, colmatch\n"
            f"args = {INPUTS['google2011']!r}\n"
            "out = []\n"
            "def run():\n"
            "    out.append(len(colmatch.match(format='google2011', **args).to_pandas()))\n"
            "ts = [threading.Thread(target=run) for _ in range(2)]\n"
            "[t.start() for t in ts]\n"
            "[t.join() for t in ts]\n"
            "print(out)\n")
    for _ in range(3):  # (it hung every time of three before)
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert p.returncode == 0 and p.stdout.strip() == "[24748, 24748]", (p.stdout, p.stderr)


def _farm_from_files(folder):
    """The native files of `folder` as colmatch.Farm's columns, read here with json and tomllib."""
    import json
    import tomllib

    with open(f"{folder}/farm.toml", "rb") as f:
        toml = tomllib.load(f)
    taskers = [json.loads(x) for x in open(f"{folder}/taskers.jsonl") if x.strip()]
    jobs = [json.loads(x) for x in open(f"{folder}/jobs.jsonl") if x.strip()]
    names = [a["name"] for a in toml["attribute"]]

    def cell(v):
        return ",".join(v) if isinstance(v, list) else v

    t = {"name": [x["name"] for x in taskers]}
    if any("power" in x for x in taskers):
        t["power"] = [x.get("power", 1.0) for x in taskers]
    for a in names:
        col = [cell(x.get("attrs", {}).get(a)) for x in taskers]
        if any(v is not None for v in col):
            t[a] = col
    j = {"id": [x["id"] for x in jobs]}
    for k in ("requests", "soft", "owner", "group", "priority", "submit", "slots", "runtime", "walltime"):
        if any(k in x for x in jobs):
            j[k] = [x.get(k) for x in jobs]
            if k == "slots":
                j[k] = [1 if v is None else v for v in j[k]]
            elif k in ("priority", "submit"):
                j[k] = [0 if v is None else v for v in j[k]]
    j["resources"] = {a: [x.get("resources", {}).get(a) for x in jobs] for a in names
                      if any(a in x.get("resources", {}) for x in jobs)}
    return colmatch.Farm(attributes=toml["attribute"], taskers=t, jobs=j, name=toml.get("name", "farm"),
                         policy=toml.get("policy"), global_values=toml.get("global"))


def test_a_farm_built_in_memory_equals_the_same_farm_from_files():
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([CLI, "generate", "--taskers", "800", "--jobs", "4000", "--seed", "3", "--save", tmp],
                       check=True, capture_output=True)
        for folder in (D, tmp):
            files = colmatch.match(farm=f"{folder}/farm.toml", taskers=f"{folder}/taskers.jsonl",
                                   jobs=f"{folder}/jobs.jsonl")
            memory = _farm_from_files(folder).match()
            pd.testing.assert_frame_equal(memory.to_pandas(), files.to_pandas())
            pd.testing.assert_frame_equal(memory.to_pandas("categories"), files.to_pandas("categories"))
            assert (memory.status == files.status).all() and (memory.tasker == files.tasker).all()
    assert (files.status == colmatch.PENDING).any() and (files.status == colmatch.ASSIGNED).any()


def test_a_farm_in_memory_from_arrays_and_its_errors():
    farm = colmatch.Farm(
        attributes=[dict(name="arch"), dict(name="slots", type="int", consumable=True),
                    dict(name="mem", type="memory", consumable=True, per="slot", default="1G")],
        taskers={"name": ["n1", "n2", "n3"], "arch": ["x86", "arm", None], "slots": np.array([8, 4, 2]),
                 "mem": ["32G", "16G", "8G"]},
        jobs={"id": ["a", "b", "c", "d"], "requests": ["arch==x86", "mem>=10G", "arch==sparc", "arch=="],
              "slots": [2, 1, 1, 1], "resources": {"mem": ["4G", None, None, None]}})
    r = farm.match()
    frame = r.to_pandas()
    assert list(frame["status"]) == ["assigned", "assigned", "pending", "rejected"]
    assert list(frame["tasker"][:2]) == ["n1", "n1"]
    assert frame["reason"][2] == "no eligible tasker: arch==\"sparc\" matches 0 of 3"
    s = farm.simulate()
    assert s.to_pandas()["status"].tolist()[:2] == ["started", "started"]
    with pytest.raises(colmatch.LoadError) as e:  # the row and the field, as a file's line
        colmatch.Farm(attributes=[dict(name="slots", type="int", consumable=True)],
                      taskers={"name": ["n1", "n2"], "slots": ["4", "x"]}).match()
    assert (e.value.file, e.value.line, e.value.field) == ("taskers", 2, "attrs.slots")
    with pytest.raises(colmatch.LoadError) as e:
        colmatch.Farm(attributes=[dict(name="slots", type="int", consumable=True)],
                      taskers={"name": ["n1", "n2"], "slots": [4]}).match()
    assert (e.value.file, e.value.field) == ("taskers", "attrs.slots") and "1 values for 2 rows" in str(e.value)
    with pytest.raises(colmatch.LoadError) as e:
        colmatch.Farm(attributes=[dict(name="arch")], taskers={"name": ["n1"], "gpu": ["x"]}).match()
    assert e.value.field == "attrs.gpu" and "unknown attribute" in str(e.value)
    with pytest.raises(colmatch.LoadError) as e:
        colmatch.Farm(attributes=[dict(name="arch")], taskers={"name": ["n1"]},
                      jobs={"id": ["a", "a"]}).match()
    assert (e.value.file, e.value.line, e.value.field) == ("jobs", 2, "id")
    with pytest.raises(colmatch.LoadError) as e:
        colmatch.Farm(attributes=[dict(name="arch", type="nosuch")], taskers={"name": ["n1"]}).match()
    assert e.value.file == "farm" and e.value.field == "type"


def test_a_policy_that_is_not_a_path_is_a_type_error_saying_where_a_table_goes():
    """Issue 28: a dict given as simulate's policy ended in pybind11's 'incompatible function arguments'."""
    farm = colmatch.Farm([{"name": "slots", "type": "int", "consumable": True}], {"name": ["t"], "slots": [2]},
                         jobs={"id": ["a"], "runtime": [5.0]})
    with pytest.raises(TypeError, match=r"policy: expected the path of a policy TOML file, not dict .*Farm\(policy"):
        farm.simulate(policy={"backfill": "easy"})
    with pytest.raises(TypeError, match="not int"):
        colmatch.simulate(format="swf", log=os.path.join(S, "kth_sp2_head3000.swf.gz"), policy=3)
    assert not np.isnan(farm.simulate().start[0])
