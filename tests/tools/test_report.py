"""colmatch report: report.html and its figures from a match and a simulate folder, opened in a real
browser (Debian's headless Chromium through chromedriver) where every figure must load with the size its
PNG file has; errors name the file and leave nothing behind; a later run replaces the report.
Run by ctest (label python) with COLMATCH_CLI and COLMATCH_SOURCE_DIR set."""
import importlib.util
import os
import shutil
import struct
import subprocess
import tempfile

import numpy as np
import pytest

SRC = os.environ.get("COLMATCH_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.environ["COLMATCH_CLI"]
S = os.path.join(SRC, "datasets", "samples")

MATCH_FIGURES = ["fig_eligible.png", "fig_reasons.png"]
SIMULATE_FIGURES = ["fig_utilisation.png", "fig_queue.png", "fig_waits.png", "fig_shares_queue.png",
                    "fig_shares_user.png", "fig_cycles.png", "fig_reasons.png"]


def run(*args, check=True):
    return subprocess.run([CLI, *args], check=check, capture_output=True, text=True)


@pytest.fixture(scope="module")
def match_dir():
    with tempfile.TemporaryDirectory() as tmp:
        run("generate", "--taskers", "500", "--jobs", "3000", "--seed", "7", "--save", f"{tmp}/farm")
        run("match", "--farm", f"{tmp}/farm/farm.toml", "--taskers", f"{tmp}/farm/taskers.jsonl", "--jobs",
            f"{tmp}/farm/jobs.jsonl", "--out", f"{tmp}/out")
        yield f"{tmp}/out"


@pytest.fixture(scope="module")
def simulate_dir():
    with tempfile.TemporaryDirectory() as tmp:
        run("simulate", "--format", "swf", "--log", f"{S}/kth_sp2_head3000.swf.gz", "--out", f"{tmp}/out")
        yield f"{tmp}/out"


SWEEP_FIGURES = ["fig_sweep_metrics.png", "fig_sweep_waits.png", "fig_sweep_heatmap.png"]


def _sweep(tmp, grid):
    with open(f"{tmp}/sweep.toml", "w") as f:
        f.write(f'[inputs.kth]\nformat = "swf"\nlog = "{S}/kth_sp2_head3000.swf.gz"\n[grid]\n{grid}')
    run("sweep", f"{tmp}/sweep.toml", "--out", f"{tmp}/out", "--workers", "2")
    return f"{tmp}/out"


@pytest.fixture(scope="module")
def sweep_dir():
    with tempfile.TemporaryDirectory() as tmp:
        yield _sweep(tmp, 'backfill = ["none", "easy"]\n"priority.queue_time" = [0, 1, 10]\n')


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(a)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    yield driver
    driver.quit()


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", path
    return struct.unpack(">II", head[16:24])


def figures_in_browser(driver, folder):
    """Opens report.html; for each <img>: its src name, whether it loaded, its natural width and height."""
    driver.get("file://" + os.path.join(folder, "report.html"))
    driver.execute_async_script(  # every image settled (loaded or failed), not only the document
        "const done = arguments[arguments.length - 1];"
        "Promise.all([...document.images].map(i => i.complete ? null :"
        " new Promise(r => { i.onload = r; i.onerror = r; }))).then(() => done());")
    return driver.execute_script(
        "return [...document.images].map(i => [i.getAttribute('src'), i.complete && i.naturalWidth > 0,"
        " i.naturalWidth, i.naturalHeight]);")


def check_report(driver, folder, expected):
    out = run("report", folder)
    assert f"with {len(expected)} figures" in out.stdout
    seen = figures_in_browser(driver, folder)
    assert sorted(s[0] for s in seen) == sorted(expected)
    for name, loaded, w, h in seen:
        assert loaded, f"{name} did not load"
        assert (w, h) == png_size(os.path.join(folder, name)), name
        assert w >= 400 and h >= 150, name  # a drawn figure, not an empty canvas
    assert not [f for f in os.listdir(folder) if f.startswith(".")], "temporary files left behind"


def test_match_report_loads_every_figure_in_chromium(match_dir, browser):
    check_report(browser, match_dir, MATCH_FIGURES)
    page = open(os.path.join(match_dir, "report.html"), encoding="utf-8").read()
    assert "<h1>colmatch match: synthetic" in page and "Summary" in page


def test_simulate_report_loads_every_figure_in_chromium(simulate_dir, browser):
    check_report(browser, simulate_dir, SIMULATE_FIGURES)
    page = open(os.path.join(simulate_dir, "report.html"), encoding="utf-8").read()
    assert "<h1>colmatch simulate: swf" in page and "Metrics" in page


def test_sweep_report_compares_the_points_in_chromium(sweep_dir, browser):
    check_report(browser, sweep_dir, SWEEP_FIGURES)
    page = open(os.path.join(sweep_dir, "report.html"), encoding="utf-8").read()
    assert "<h1>colmatch sweep: sweep" in page and "<h2>Points</h2>" in page
    with open(os.path.join(sweep_dir, "sweep.csv")) as f:
        points = [line.split(",")[0] for line in f.read().splitlines()[1:]]
    assert len(points) == 6 and all(f"<td>{p}</td>" in page for p in points)


def test_sweep_report_without_two_axes_draws_no_heat_map(browser):
    with tempfile.TemporaryDirectory() as tmp:
        folder = _sweep(tmp, 'backfill = ["none", "easy"]\n"priority.queue_time" = [5]\n')
        check_report(browser, folder, SWEEP_FIGURES[:2])


def test_a_sweep_folder_being_written_is_refused(sweep_dir):
    import fcntl

    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(sweep_dir, f"{tmp}/out", ignore=shutil.ignore_patterns("report.html", "fig_*"))
        shutil.copy(os.path.join(os.path.dirname(sweep_dir), "sweep.toml"), f"{tmp}/sweep.toml")
        with open(f"{tmp}/.out.lock", "w") as lock:  # the lock colmatch sweep holds while it runs
            fcntl.flock(lock, fcntl.LOCK_EX)
            r = run("report", f"{tmp}/out", check=False)
            assert r.returncode == 1 and "a colmatch run is writing" in r.stderr, r.stderr
            r = run("sweep", f"{tmp}/sweep.toml", "--out", f"{tmp}/out", check=False)
            assert r.returncode == 1 and "another colmatch run is writing this folder" in r.stderr, r.stderr
        assert not os.path.exists(f"{tmp}/out/report.html")
        os.unlink(f"{tmp}/out/sweep.json")
        r = run("report", f"{tmp}/out", check=False)
        assert r.returncode == 1 and "sweep.json: missing" in r.stderr, r.stderr


def test_the_browser_check_sees_a_missing_figure(match_dir, browser):
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(match_dir, f"{tmp}/out")
        run("report", f"{tmp}/out")
        os.unlink(f"{tmp}/out/fig_reasons.png")
        seen = {s[0]: s[1] for s in figures_in_browser(browser, f"{tmp}/out")}
        assert seen == {"fig_eligible.png": True, "fig_reasons.png": False}


def test_a_later_run_replaces_the_report(match_dir):
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(match_dir, f"{tmp}/out")
        run("report", f"{tmp}/out")
        run("simulate", "--format", "swf", "--log", f"{S}/kth_sp2_head3000.swf.gz", "--out", f"{tmp}/out")
        assert not os.path.exists(f"{tmp}/out/report.html")
        assert not os.path.exists(f"{tmp}/out/fig_eligible.png")


def test_errors_name_the_file_and_leave_nothing(simulate_dir):
    with tempfile.TemporaryDirectory() as tmp:
        r = run("report", f"{tmp}", check=False)
        assert r.returncode == 1 and "no results.csv, schedule.csv or sweep.csv" in r.stderr
        r = run("report", f"{tmp}/missing", check=False)
        assert r.returncode == 1 and "not a folder" in r.stderr
        shutil.copytree(simulate_dir, f"{tmp}/out")
        for f in os.listdir(f"{tmp}/out"):
            if f.startswith("fig_") or f == "report.html":
                os.unlink(f"{tmp}/out/{f}")
        with open(f"{tmp}/out/timeline.csv", "w") as f:
            f.write("time,running\n1,2\n")
        r = run("report", f"{tmp}/out", check=False)
        assert r.returncode == 1 and "timeline.csv: line 1: no column queued" in r.stderr, r.stderr
        with open(f"{tmp}/out/timeline.csv", "w") as f:
            f.write("time,running,queued\n1,2,3\nx,2,3\n")
        r = run("report", f"{tmp}/out", check=False)
        assert r.returncode == 1 and "timeline.csv: line 3: field 'time': not a number" in r.stderr, r.stderr
        # schedule.csv is read with its number columns as numbers (memory); a field that is not one is still
        # named by line and field
        shutil.copy(f"{simulate_dir}/timeline.csv", f"{tmp}/out/timeline.csv")
        with open(f"{tmp}/out/schedule.csv") as f:
            rows = f.read().split("\n")
        cells = rows[2].split(",")
        cells[2] = "soon"  # start
        rows[2] = ",".join(cells)
        with open(f"{tmp}/out/schedule.csv", "w") as f:
            f.write("\n".join(rows))
        r = run("report", f"{tmp}/out", check=False)
        assert r.returncode == 1 and "schedule.csv: line 3: field 'start': not a number" in r.stderr, r.stderr
        left = sorted(f for f in os.listdir(f"{tmp}/out") if f.startswith((".", "fig_", "report")))
        assert left == [], left


def test_planted_links_are_not_followed_and_a_killed_reports_temporaries_are_cleared(simulate_dir):
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(simulate_dir, f"{tmp}/out", ignore=shutil.ignore_patterns("report.html", "fig_*"))
        victim = f"{tmp}/victim"
        with open(victim, "w") as f:
            f.write("precious")
        # links at every name a report ever used for its temporaries, and what a killed one leaves
        for name in (".report.html.tmp", ".fig_waits.png.tmp", ".fig_queue.png.tmp"):
            os.symlink(victim, f"{tmp}/out/{name}")
        with open(f"{tmp}/out/.report-999-abcdef.png.tmp", "wb") as f:
            f.write(b"\x89PNG half")
        os.symlink(victim, f"{tmp}/out/.report-999-abcdef.html.tmp")
        r = run("report", f"{tmp}/out", check=False)
        assert r.returncode == 0, r.stderr
        with open(victim) as f:
            assert f.read() == "precious"
        assert not [n for n in os.listdir(f"{tmp}/out") if n.startswith(".")], "stale temporaries are removed"
        assert os.path.getsize(f"{tmp}/out/fig_waits.png") > 1000
        # and a colmatch run into the folder is not refused because of a report's temporaries
        with open(f"{tmp}/out/.report-999-abcdef.png.tmp", "wb") as f:
            f.write(b"left by a report killed mid-write")
        r = run("simulate", "--format", "swf", "--log", f"{S}/kth_sp2_head3000.swf.gz", "--out", f"{tmp}/out",
                check=False)
        assert r.returncode == 0, r.stderr


def test_the_lock_a_report_makes_is_readable_by_all(match_dir):
    with tempfile.TemporaryDirectory() as tmp:  # a shared folder: other users take the lock read-only
        shutil.copytree(match_dir, f"{tmp}/out")
        run("report", f"{tmp}/out")
        assert os.stat(f"{tmp}/.out.lock").st_mode & 0o777 == 0o644


def test_a_folder_being_written_is_refused(match_dir):
    import fcntl

    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(match_dir, f"{tmp}/out", ignore=shutil.ignore_patterns("report.html", "fig_*"))
        with open(f"{tmp}/.out.lock", "w") as lock:  # the lock a colmatch run holds while it writes out/
            fcntl.flock(lock, fcntl.LOCK_EX)
            r = run("report", f"{tmp}/out", check=False)
            assert r.returncode == 1 and "a colmatch run is writing" in r.stderr, r.stderr
        assert not os.path.exists(f"{tmp}/out/report.html")
        run("report", f"{tmp}/out")


def _report_module(name="report"):
    spec = importlib.util.spec_from_file_location(name, os.path.join(SRC, "tools", f"{name}.py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def test_slot_seconds_per_interval():
    m = _report_module()
    # 2 slots over [0, 10), 1 slot over [5, 20): per interval of 5 s, 10, 15, 5, 5 slot-seconds
    got = m._step_integral(np.array([0.0, 5.0]), np.array([10.0, 20.0]), np.array([2.0, 1.0]),
                           np.array([0.0, 5.0, 10.0, 15.0, 20.0]))
    np.testing.assert_allclose(got, [10, 15, 5, 5])
    got = m._step_integral(np.array([3.0]), np.array([4.0]), np.array([7.0]), np.array([0.0, 3.5, 10.0]))
    np.testing.assert_allclose(got, [3.5, 3.5])


def test_reason_classes():
    m = _report_module("report_data")
    assert m._reason_class("no eligible tasker: mem>=8G matches 0 of 5,000") == "no eligible tasker: mem"
    assert m._reason_class("throttled: user alice max_jobs 2") == "throttled: user"
    assert m._reason_class("eligible but no free capacity: 186 eligible taskers") == "eligible but no free capacity"
    assert m._reason_class("") == "(no reason)"


def test_a_file_cut_short_is_an_error_not_a_report(simulate_dir, match_dir):
    """Issue 28: a CSV cut inside a line, or cut at a line's end so that jobs are missing, gave exit 0 and a
    report of part of the run."""
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(simulate_dir, f"{tmp}/sim")
        with open(f"{tmp}/sim/schedule.csv", "rb") as f:
            data = f.read()
        with open(f"{tmp}/sim/schedule.csv", "wb") as f:
            f.write(data[: len(data) // 2 + 3])  # inside a line
        r = run("report", f"{tmp}/sim", check=False)
        assert r.returncode == 1 and "schedule.csv: line" in r.stderr and "cut short" in r.stderr, r.stderr
        with open(f"{tmp}/sim/schedule.csv", "wb") as f:
            f.write(b"".join(data.splitlines(keepends=True)[:3]))  # whole lines, most jobs gone
        r = run("report", f"{tmp}/sim", check=False)
        assert r.returncode == 1 and "summary.json counts" in r.stderr, r.stderr
        shutil.copytree(match_dir, f"{tmp}/match")
        with open(f"{tmp}/match/results.csv", "rb") as f:
            data = f.read()
        with open(f"{tmp}/match/results.csv", "wb") as f:
            f.write(data[:-1])  # the last newline gone
        r = run("report", f"{tmp}/match", check=False)
        assert r.returncode == 1 and "results.csv: line" in r.stderr and "cut short" in r.stderr, r.stderr


def _big_simulate_folder(folder, n, seed=3):
    """A simulate folder of n jobs (95% started, one row each) as colmatch writes one, made with numpy."""
    import pandas as pd

    os.makedirs(folder)
    rng = np.random.default_rng(seed)
    submit = np.sort(rng.integers(0, 10**7, n))
    wait = rng.integers(0, 5000, n)
    start, started = submit + wait, rng.random(n) < 0.95
    end = start + rng.integers(1, 20000, n)
    text = lambda a: np.where(started, a.astype(str), "")  # noqa: E731
    pd.DataFrame({"job": np.char.add("job", np.arange(n).astype(str)), "submit": submit, "start": text(start),
                  "end": text(end), "wait": text(wait), "tasker": np.where(started, "node0001", ""),
                  "slots": rng.integers(1, 64, n), "queue": np.char.add("q", rng.integers(0, 5, n).astype(str)),
                  "user": np.char.add("u", rng.integers(0, 300, n).astype(str)),
                  "status": np.where(started, "started", "pending"),
                  "reason": np.where(started, "", "throttled: user max_jobs 2")}).to_csv(f"{folder}/schedule.csv",
                                                                                         index=False)
    minutes = np.arange(2000) * 60
    pd.DataFrame({"time": minutes, "running": minutes % 50, "queued": minutes % 70, "used_slots": minutes % 100,
                  "offered_slots": 100}).to_csv(f"{folder}/timeline.csv", index=False)
    pd.DataFrame({"time": minutes, "cycles": 3, "scheduler_us": minutes % 500, "max_cycle_us": minutes % 900}).to_csv(
        f"{folder}/cycles.csv", index=False)
    with open(f"{folder}/summary.json", "w") as f:
        f.write(f'{{"jobs": {n}}}\n')


def _peak_rss_mb(*args):
    """The peak resident memory of `colmatch report` run alone (a fresh Python whose only child it is)."""
    probe = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
             "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024); "
             "print(r.stderr, file=sys.stderr)")
    r = subprocess.run(["/usr/bin/python3", "-c", probe, CLI, *args], capture_output=True, text=True)
    code, mb = r.stdout.split()
    assert code == "0", r.stderr
    return int(mb)


def test_a_large_schedule_is_read_in_chunks(simulate_dir):
    """Issue 28: report read schedule.csv whole, as text: about 10x its size in memory (a 10M-job folder
    needed 7.3 GB and died). Now in chunks, keeping about 40 bytes per started row for the figures: 600,000
    jobs (a 38 MB schedule.csv) take under 3x the file beyond what a report of 3,000 jobs takes (it took
    about 8x)."""
    with tempfile.TemporaryDirectory() as tmp:
        _big_simulate_folder(f"{tmp}/big", 600_000)
        size_mb = os.path.getsize(f"{tmp}/big/schedule.csv") / 2**20
        shutil.copytree(simulate_dir, f"{tmp}/small", ignore=shutil.ignore_patterns("report.html", "fig_*"))
        small, big = _peak_rss_mb("report", f"{tmp}/small"), _peak_rss_mb("report", f"{tmp}/big")
        assert big - small < 3 * size_mb, (small, big, size_mb)
        names = sorted(f for f in os.listdir(f"{tmp}/big") if f.startswith("fig_"))
        assert names == sorted(SIMULATE_FIGURES)


def test_a_summary_that_is_not_a_json_object_is_an_error_not_a_traceback(match_dir):
    """Issue 45: `colmatch report` on a summary.json linked to /dev/zero ended in a traceback."""
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(match_dir, f"{tmp}/out")
        for f in os.listdir(f"{tmp}/out"):
            if f.startswith("fig_") or f == "report.html":
                os.unlink(f"{tmp}/out/{f}")
        for why, make in (("not a regular file", lambda p: os.symlink("/dev/zero", p)),
                          ("not JSON text", lambda p: open(p, "wb").write(b"{\"jobs\": \"\xff\"}")),
                          ("not a JSON object", lambda p: open(p, "w").write("[1, 2]"))):
            os.unlink(f"{tmp}/out/summary.json")
            make(f"{tmp}/out/summary.json")
            r = run("report", f"{tmp}/out", check=False)
            assert r.returncode == 1 and f"summary.json: {why}" in r.stderr and "Traceback" not in r.stderr, r.stderr
