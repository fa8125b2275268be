#!/usr/bin/python3
"""colmatch sweep SWEEP_TOML --out DIR [--scheduler tcp://HOST:8786] [--workers N] [--ship-inputs]

Runs a policy sweep on Dask distributed: one colmatch simulate (or match) run per point of the sweep file
(sweep_spec.py reads and checks it; its docstring and docs/sweep.md describe the file and DIR), placed by an
embedded LocalCluster or an existing cluster, with one row per point in DIR/sweep.csv. The same from
Python: colmatch.sweep(spec, out=..., scheduler=None). Exit status: 0 every point ran; 2 some failed; 1
the sweep could not start (nothing written); 130 interrupted (run it again to resume).
"""
import argparse
import contextlib
import csv
import fcntl
import hashlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

try:  # in the colmatch package (colmatch._sweep beside colmatch._sweep_spec)
    from ._sweep_spec import SweepError, json_object, load_spec
except ImportError:  # the CLI's script, beside sweep_spec.py
    from sweep_spec import SweepError, json_object, load_spec

LOCK_WAIT = 30.0  # seconds a point waits for a dying earlier attempt of itself to release its run folder
RUN_LOCKED = "another colmatch run is writing this folder"  # loaders/writers/text.cpp's words


# ---------------------------------------------------------------------------------------------------
# One point, on a worker. Self-contained: workers need only Python and the colmatch binary.

def _run_cli(cli, argv, timeout=None):
    """Runs colmatch; killed with its worker (PR_SET_PDEATHSIG through util-linux's setpriv)."""
    cmd = [cli] + argv
    if shutil.which("setpriv"):
        cmd = ["setpriv", "--pdeathsig", "KILL", "--"] + cmd
    return subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)


def _error_text(proc):
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    errors = [ln[len("colmatch: error: "):] for ln in lines if ln.startswith("colmatch: error: ")]
    if errors:
        return "; ".join(errors)
    return lines[-1] if lines else f"exit status {proc.returncode}"


def _json_object(path):
    """The JSON object in `path`, or None (sweep_spec.json_object's reasons: not a regular file, too large,
    not JSON, not an object; or unreadable)."""
    try:
        return json_object(path)
    except (OSError, ValueError):
        return None


def complete(folder, files):
    """Whether `folder` holds a whole run with `files` (Sweep.needed; colmatch publishes a run's files
    together) whose JSON files read: a run with a corrupt metrics.json (a disk error, a hand edit) is run
    again, not resumed as "ok" with empty figures."""
    paths = [os.path.join(folder, f) for f in files]
    return all(os.path.isfile(p) for p in paths) and all(_json_object(p) is not None
                                                         for p in paths if p.endswith(".json"))


def run_point(task, shipped=None):
    """Runs one point. task: cli, id, needed (the files of a complete point: Sweep.needed), argv (with
    {option} placeholders), files, policy, out (the run folder when the workers share the filesystem, else
    None). shipped: {option: bytes} of the input files (--ship-inputs). Returns a dict: status ("ok" or "failed"), error, seconds, and with shipped
    inputs the run's files {name: bytes}."""
    t0 = time.monotonic()
    result = {"id": task["id"], "status": "ok", "error": "", "reused": False, "host": os.uname().nodename}
    if task["out"] and complete(task["out"], task["needed"]):  # a retry after the first attempt finished
        result["reused"] = True
        return result
    with tempfile.TemporaryDirectory(prefix="colmatch-point-") as tmp:
        files = dict(task["files"])
        if shipped is not None:
            files = {opt: _cached_input(opt, os.path.basename(task["files"][opt]), data)
                     for opt, data in shipped.items()}
        policy = task["policy"]
        if not task["out"] or not os.path.isfile(policy):
            with open(os.path.join(tmp, "policy.toml"), "w", encoding="utf-8") as f:
                f.write(task["policy_text"])
            policy = os.path.join(tmp, "policy.toml")
        out = task["out"] or os.path.join(tmp, "run")
        argv = [a.format(**files) if a.startswith("{") else a for a in task["argv"]]
        argv += ["--policy", policy, "--out", out]
        deadline = time.monotonic() + LOCK_WAIT
        while True:
            proc = _run_cli(task["cli"], argv)
            # a retry after its worker died: that worker's run may not have ended yet (it is being killed)
            if proc.returncode != 1 or RUN_LOCKED not in proc.stderr or time.monotonic() > deadline:
                break
            time.sleep(0.1)
            if task["out"] and complete(task["out"], task["needed"]):
                result.update(reused=True, seconds=time.monotonic() - t0)
                return result
        if proc.returncode not in (0, 2) or not complete(out, task["needed"]):
            result.update(status="failed", error=_error_text(proc))
        elif not task["out"]:
            result["files"] = {}
            for name in sorted(os.listdir(out)):
                with open(os.path.join(out, name), "rb") as f:
                    result["files"][name] = f.read()
    result["seconds"] = time.monotonic() - t0
    return result


def _cached_input(opt, name, data):
    """A shipped input written once per worker machine (by content), then read by path."""
    import stat

    digest = hashlib.sha256(data).hexdigest()[:20]
    top = os.path.join(tempfile.gettempdir(), f"colmatch-sweep-inputs-{os.getuid()}")
    try:
        os.mkdir(top, 0o700)
    except FileExistsError:
        pass
    st = os.lstat(top)  # in a shared /tmp: ours and a real folder, never someone else's or a link
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        raise OSError(f"{top}: not a folder of this user; remove it")
    if st.st_mode & 0o077:
        os.chmod(top, 0o700)
    folder = os.path.join(top, digest)
    path = os.path.join(folder, name)
    if not os.path.isfile(path):
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".in-")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    return path


# ---------------------------------------------------------------------------------------------------
# The driver.

def _write_atomic(path, data):
    """Writes `path` whole or not at all: a new file (never through a link), then rename."""
    folder = os.path.dirname(path)
    for attempt in range(100):
        tmp = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}.{attempt}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
            break
        except FileExistsError:
            continue
    else:
        raise OSError(f"{path}: cannot create a temporary file")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise


def _publish_files(runs, point_id, files):
    """A run's files that came back through Dask, published as colmatch publishes a run: all together."""
    final = os.path.join(runs, point_id)
    tmp = tempfile.mkdtemp(dir=runs, prefix=f".{point_id}.new-sweep-")
    try:
        for name, data in files.items():
            if os.sep in name or name.startswith("."):
                raise OSError(f"{final}: a run file named {name!r}")
            fd = os.open(os.path.join(tmp, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        os.chmod(tmp, 0o755)
        if os.path.lexists(final):
            shutil.rmtree(tmp)
            return
        os.rename(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


class FolderBusy(Exception):
    """folder_lock: a colmatch run (or sweep, or report) holds the folder's lock; .lock is its path."""

    def __init__(self, lock):
        super().__init__(lock)
        self.lock = lock


@contextlib.contextmanager
def folder_lock(folder):
    """Holds the lock a colmatch run takes on its --out (`.<name>.lock` beside it, loaders/writers/text.cpp)
    while the block runs, without waiting for it: FolderBusy when another holds it. report.py uses it too."""
    lock = os.path.join(os.path.dirname(folder), f".{os.path.basename(folder)}.lock")
    fd = _open_lock(lock)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise FolderBusy(lock) from None
        yield lock
    finally:
        os.close(fd)


def _open_lock(lock):
    """The lock file, as colmatch opens it (open_lock there): made readable by all, taken read-only by a
    user who may not write it."""
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
    except PermissionError:
        return os.open(lock, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    st = os.fstat(fd)
    if st.st_uid == os.geteuid() and st.st_mode & 0o777 != 0o644:
        os.fchmod(fd, 0o644)
    return fd


def _clear_stale(runs):
    """Removes the private folders of runs that died before publishing (a worker killed with its run):
    `.<point>.new-*` whose run's lock (`.<point>.lock`, loaders/writers/text.cpp) no process holds."""
    try:
        names = os.listdir(runs)
    except FileNotFoundError:
        return
    for name in names:
        if not (name.startswith(".") and ".new-" in name):
            continue
        point = name[1:name.index(".new-")]
        lock = os.path.join(runs, f".{point}.lock")
        try:
            fd = os.open(lock, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            fd = None
        try:
            if fd is not None:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            shutil.rmtree(os.path.join(runs, name), ignore_errors=True)
        except BlockingIOError:
            pass  # a run is writing it now
        finally:
            if fd is not None:
                os.close(fd)


def headline(folder, command):
    """The figures of a complete run that sweep.csv shows."""
    def read(name):
        return _json_object(os.path.join(folder, name)) or {}

    s = read("summary.json")
    seconds = s.get("seconds", {})
    if command == "match":
        return {"assigned": s.get("assigned"), "pending": s.get("pending"), "rejected": s.get("rejected"),
                "categories": s.get("categories"), "load_seconds": seconds.get("load"),
                "run_seconds": seconds.get("match_total")}
    m = read("metrics.json")
    w = m.get("wait_seconds", {})
    return {"started": s.get("started"), "pending": s.get("pending"), "rejected": s.get("rejected"),
            "wait_mean": w.get("mean"), "wait_median": w.get("median"), "wait_p95": w.get("p95"),
            "bounded_slowdown": m.get("mean_bounded_slowdown"), "utilisation": m.get("utilisation"),
            "makespan": m.get("makespan_seconds"), "backfilled": m.get("backfilled"),
            "load_seconds": seconds.get("load"), "run_seconds": seconds.get("simulate")}


FIGURES = {"simulate": ["started", "pending", "rejected", "wait_mean", "wait_median", "wait_p95", "bounded_slowdown",
                        "utilisation", "makespan", "backfilled", "load_seconds", "run_seconds"],
           "match": ["assigned", "pending", "rejected", "categories", "load_seconds", "run_seconds"]}


def _csv_text(sweep, rows):
    keys = [".".join(k) for k, _ in sweep.axes]
    for p in sweep.points:  # keys only [[point]] tables give
        keys += [k for k in p.params if k not in keys]
    header = ["point", "input", "status", "error"] + keys + FIGURES[sweep.command] + ["reused", "seconds"]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for p in sweep.points:
        r = rows[p.id]
        values = [r.get("params", {}).get(k, "") for k in keys]
        values = [json.dumps(v) if isinstance(v, (list, dict)) else v for v in values]
        figs = [r.get(f, "") if r.get(f) is not None else "" for f in FIGURES[sweep.command]]
        w.writerow([p.id, p.input, r["status"], r.get("error", "")] + values + figs +
                   [str(bool(r.get("reused"))).lower(), f"{r.get('seconds', 0.0):.3f}"])
    return buf.getvalue()


class Progress:
    """points done, running, failed and the time left, redrawn on a terminal at most every 0.5 s."""

    def __init__(self, total, enabled):
        self.total, self.enabled, self.start, self.last = total, enabled, time.monotonic(), 0.0
        self.done = self.failed = self.reused = 0

    def show(self, running, final=False):
        now = time.monotonic()
        if not self.enabled or (now - self.last < 0.5 and not final):
            return
        self.last = now
        ran = self.done - self.reused
        left = self.total - self.done
        eta = ""
        if ran and left:
            per = (now - self.start) / ran
            eta = f", ~{per * left:.0f} s left"
        sys.stderr.write(f"\r\033[Ksweep: {self.done} of {self.total} points done ({self.failed} failed), "
                         f"{running} running{eta}")
        if final:
            sys.stderr.write("\r\033[K")
        sys.stderr.flush()


@contextlib.contextmanager
def _main_not_reimported():
    """While the embedded cluster lives, its worker processes (started by multiprocessing's spawn, now and
    when a dead one is restarted) do not import the caller's __main__: a script that calls colmatch.sweep at
    its top level, as the README shows, was run again by every worker, each starting a sweep of its own,
    and never returned (issue 45). spawn imports __main__ by its __spec__ name or its __file__; both are
    hidden meanwhile (the sweep's tasks travel by value: workers need nothing from __main__)."""
    main = sys.modules.get("__main__")
    saved = {k: getattr(main, k) for k in ("__spec__", "__file__") if main is not None and hasattr(main, k)}
    try:
        if main is not None:
            main.__spec__ = None
            if "__file__" in saved:
                del main.__file__
        yield
    finally:
        for k, v in saved.items():
            setattr(main, k, v)


def _client(scheduler, workers):
    import logging

    from distributed import Client, LocalCluster

    if scheduler is not None:
        return Client(scheduler, timeout="30s"), None
    n = workers or os.cpu_count() or 1
    # the scheduler's HTTP server on a free port: a fixed one (8787) may be another cluster's
    cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0",
                           silence_logs=logging.ERROR)
    return Client(cluster), cluster


def _check_scheduler(address):
    """A Dask scheduler address Dask can read (`tcp://HOST:PORT`, `HOST:PORT`, `tls://..`, `inproc://..`),
    checked before anything is written: SweepError naming --scheduler."""
    if address is None:
        return
    from distributed.comm.addressing import parse_address, parse_host_port
    from distributed.comm.registry import backends

    try:
        if not isinstance(address, str) or not address:
            raise ValueError("expected an address such as tcp://HOST:8786")
        scheme, location = parse_address(address)
        if scheme not in backends:
            raise ValueError(f"unknown protocol '{scheme}' (known: {', '.join(sorted(backends))})")
        if scheme in ("tcp", "tls"):
            host, port = parse_host_port(location)
            if not host or any(c.isspace() for c in host) or not 0 < int(port) < 65536:
                raise ValueError(f"'{location}' is not HOST:PORT with a port from 1 to 65535")
    except (ValueError, TypeError) as e:
        raise SweepError("--scheduler", 0, "", f"{address!r}: {e}") from None


def run_sweep(spec, out, scheduler=None, workers=None, ship_inputs=False, cli=None, progress=None):
    """Runs a sweep; returns (Sweep, {point id: row}). Raises SweepError before writing anything."""
    _check_scheduler(scheduler)
    sweep = load_spec(spec)
    cli = cli or os.environ.get("COLMATCH_CLI") or shutil.which("colmatch")
    if not cli or not os.access(cli, os.X_OK):
        raise SweepError("colmatch", 0, "", "the colmatch binary is not found (set COLMATCH_CLI or pass cli=)")
    cli = os.path.abspath(cli)
    sweep.check_formats(cli)
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise SweepError("--workers", 0, "", "expected a whole number of at least 1")
    out = os.path.abspath(os.fspath(out))
    if os.path.exists(out) and not os.path.isdir(out):
        raise SweepError(out, 0, "", "not a folder")
    runs, points_dir = os.path.join(out, "runs"), os.path.join(out, "points")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    # `report`, `simulate --out` and another sweep on this folder wait for this one
    try:
        with folder_lock(out):
            os.makedirs(runs, exist_ok=True)
            os.makedirs(points_dir, exist_ok=True)
            return sweep, _drive(sweep, out, runs, points_dir, scheduler, workers, ship_inputs, cli, progress)
    except FolderBusy as e:
        raise SweepError(out, 0, "", f"another colmatch run is writing this folder (lock {e.lock})") from None


def _drive(sweep, out, runs, points_dir, scheduler, workers, ship_inputs, cli, progress):
    _clear_stale(runs)
    _write_atomic(os.path.join(out, "sweep.json"), json.dumps(sweep.describe(), indent=1) + "\n")
    rows, todo = {}, []
    for p in sweep.points:
        policy = os.path.join(points_dir, f"{p.id}.toml")
        try:
            with open(policy, encoding="utf-8") as f:
                same = f.read() == p.policy_text
        except OSError:
            same = False
        if not same:
            _write_atomic(policy, p.policy_text)
        folder = os.path.join(runs, p.id)
        if complete(folder, sweep.needed):
            rows[p.id] = {"status": "ok", "reused": True, "params": p.params, **headline(folder, sweep.command)}
        else:
            todo.append((p, policy))
    bar = Progress(len(sweep.points), sys.stderr.isatty() if progress is None else progress)
    bar.done = bar.reused = len(rows)
    if todo:
        _run_on_dask(sweep, todo, runs, rows, scheduler, workers, ship_inputs, cli, bar)
    bar.show(0, final=True)
    _clear_stale(runs)
    _write_atomic(os.path.join(out, "sweep.csv"), _csv_text(sweep, rows))
    return rows


def _run_on_dask(sweep, todo, runs, rows, scheduler, workers, ship_inputs, cli, bar):
    import cloudpickle

    # the task's code travels with it: the workers need not import this file
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    cloudpickle.register_pickle_by_value(sys.modules[json_object.__module__])  # (complete() reads with it)
    with contextlib.ExitStack() as hidden:
        if scheduler is None:
            hidden.enter_context(_main_not_reimported())
        _run_on_cluster(sweep, todo, runs, rows, scheduler, workers, ship_inputs, cli, bar)


def _run_on_cluster(sweep, todo, runs, rows, scheduler, workers, ship_inputs, cli, bar):
    from distributed import wait

    client, cluster = _client(scheduler, workers)
    try:
        shipped = {}
        if ship_inputs:
            for name, (_, files) in sweep.inputs.items():
                data = {}
                for opt, path in files.items():
                    with open(path, "rb") as f:
                        data[opt] = f.read()
                # one copy to each worker, once: every point of this input takes it from there
                [shipped[name]] = client.scatter([data], broadcast=True)
        futures = {}
        for p, policy in todo:
            task = {"cli": cli, "id": p.id, "needed": sweep.needed, "argv": p.argv, "files": p.files,
                    "policy": policy, "policy_text": p.policy_text,
                    "out": None if ship_inputs else os.path.join(runs, p.id)}
            f = client.submit(run_point, task, shipped.get(p.input), key=f"colmatch-point-{p.id}", pure=False)
            futures[f] = p
        slots = sum(client.nthreads().values()) or 1
        pending = set(futures)
        bar.show(min(len(pending), slots))
        while pending:
            try:  # on a terminal: wake up to redraw the progress line while long points run
                done, pending = wait(pending, timeout=0.5 if bar.enabled else None, return_when="FIRST_COMPLETED")
            except TimeoutError:
                bar.show(min(len(pending), slots))
                continue
            for f in done:
                p = futures[f]
                try:
                    r = f.result()
                except Exception as e:  # the task itself broke (not the run: that is a failed row)
                    r = {"status": "failed", "error": f"{type(e).__name__}: {e}", "seconds": 0.0}
                if r.get("files") is not None:
                    _publish_files(runs, p.id, r.pop("files"))
                r["params"] = p.params
                if r["status"] == "ok":
                    r.update(headline(os.path.join(runs, p.id), sweep.command))
                rows[p.id] = r
                bar.done += 1
                bar.failed += r["status"] != "ok"
            bar.show(min(len(pending), slots))
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def main(argv):
    ap = argparse.ArgumentParser(prog="colmatch sweep", description=__doc__.split("\n\n")[1])
    ap.add_argument("spec", metavar="SWEEP_TOML")
    ap.add_argument("--out", required=True)
    ap.add_argument("--scheduler", help="a Dask scheduler's address (default: an embedded LocalCluster)")
    ap.add_argument("--workers", type=int, help="worker processes of the embedded cluster (default: one per core)")
    ap.add_argument("--ship-inputs", action="store_true", help="send the input files to the workers")
    args = ap.parse_args(argv[1:])
    if args.workers is not None and args.scheduler is not None:
        print("colmatch: error: --workers is for the embedded cluster; an existing one has its own",
              file=sys.stderr)
        return 1
    # unwinds: the cluster stops, and the runs die with their workers (a terminal closed sends SIGHUP)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    signal.signal(signal.SIGHUP, lambda *_: sys.exit(129))
    try:
        sweep, rows = run_sweep(args.spec, args.out, args.scheduler, args.workers, args.ship_inputs)
    except SweepError as e:
        print(f"colmatch: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"colmatch: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\ncolmatch: interrupted: the points done are kept; run the same sweep again to resume",
              file=sys.stderr)
        return 130
    failed = [p for p in sweep.points if rows[p.id]["status"] != "ok"]
    reused = sum(1 for p in sweep.points if rows[p.id].get("reused"))
    for p in failed[:20]:
        print(f"colmatch: point {p.id} failed: {rows[p.id]['error']}", file=sys.stderr)
    print(f"wrote {os.path.join(args.out, 'sweep.csv')}: {len(sweep.points)} points, "
          f"{len(sweep.points) - len(failed)} ok ({reused} from an earlier run), {len(failed)} failed")
    return 2 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
