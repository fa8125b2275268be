#!/usr/bin/python3
"""colmatch sweep SWEEP_TOML --out DIR [--scheduler tcp://HOST:8786] [--workers N] [--ship-inputs]

A policy sweep: one `colmatch simulate` (or `match`) run per point of a grid of inputs x policy values,
run on Dask distributed (an embedded LocalCluster, or an existing cluster given by --scheduler), with one
row per point in DIR/sweep.csv. The same from Python: colmatch.sweep(spec, out=..., scheduler=None).

sweep.toml:

    command = "simulate"             # or "match"; the default is simulate
    until = 864000                   # optional: simulate's --until
    threads = 1                      # optional: --threads of each run (default 1: one run per core)
    policy = "base.toml"             # optional: the policy every point starts from (a file, or a table)

    [inputs.kth]                     # each input a named entry: --format and the format's options
    format = "swf"
    log = "kth.swf.gz"               # relative paths are relative to the sweep file's folder

    [grid]                           # keys of the [policy] table, dotted, each with a list of values
    backfill = ["none", "easy"]
    "priority.queue_time" = [0, 1, 10]

    [[point]]                        # optional: points of their own, beside the grid's product
    input = "kth"                    # optional: one input (default: every input)
    backfill = "easy"
    "fbsng.queues.bulk.QPD" = 2

The points are inputs x the product of the grid's lists, then the explicit points. A point's policy is the
input's own [policy] (native farm.toml), then the sweep's `policy`, then the point's values; it is written to
DIR/points/<point>.toml and passed with --policy. A point's id is its input's name and a hash of what it runs
(command, input, policy, until): the same point has the same id in every run of the sweep.

DIR holds sweep.json (the sweep's axes and points), sweep.csv (a row per point: id, input, status, error,
its grid values, the headline figures of its metrics.json or summary.json), points/ and runs/<point>/ (the
run's usual outputs, published atomically by colmatch itself). Resumable: a point whose run folder is
complete is not run again. A point that fails (a policy value colmatch refuses, a bad input) is a row with
its error and the others go on. Exit status: 0 every point ran; 2 some failed; 1 the sweep could not start
(a bad sweep file: file, line and key named, nothing written), 130 interrupted (run it again to resume).

Where the workers run: by default they read the inputs by path and write runs/ themselves, so every worker
must see the same paths as this process (a shared filesystem, as on farms), and the same colmatch binary.
With --ship-inputs the input files are sent once to each worker and the run's outputs come back through
Dask: only this machine needs the files.
"""
import argparse
import copy
import csv
import fcntl
import hashlib
import io
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

LOCK_WAIT = 30.0  # seconds a point waits for a dying earlier attempt of itself to release its run folder
RUN_LOCKED = "another colmatch run is writing this folder"  # loaders/writers/text.cpp's words
MAX_POINTS = 100_000  # a grid larger than this is refused: a sweep is a bounded list of runs
CLI_OWN_OPTIONS = {"help", "format", "out", "threads", "isa", "policy", "until", "pools", "job", "category",
                   "simulate", "save"}  # the CLI's options that are not an input's files
POINT_FILES = {"simulate": ("summary.json", "metrics.json", "schedule.csv"),
               "match": ("summary.json", "results.csv")}


class SweepError(ValueError):
    """A sweep that cannot start: .file, .line (0 when unknown) and .key (dotted) name what is wrong."""

    def __init__(self, file, line, key, why):
        self.file, self.line, self.key, self.why = file, line, key, why
        where = f"{file}:{line}" if line else f"{file}"
        super().__init__(f"{where}: " + (f"field '{key}': " if key else "") + why)


# ---------------------------------------------------------------------------------------------------
# Where each key of a TOML text is (tomllib gives values, not lines): the first line that defines a path.

def _split_key(text):
    """'a."b.c".d' -> ('a', 'b.c', 'd')."""
    parts, cur, quote, i = [], "", None, 0
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\" and quote == '"' and i + 1 < len(text):
                cur += text[i:i + 2]
                i += 2
                continue
            cur += c
            if c == quote:
                quote = None
        elif c in "\"'":
            quote = c
            cur += c
        elif c == ".":
            parts.append(cur)
            cur = ""
        else:
            cur += c
        i += 1
    parts.append(cur)
    out = []
    for p in parts:
        p = p.strip()
        if len(p) >= 2 and p[0] == p[-1] == '"':
            try:
                p = json.loads(p)
            except ValueError:
                p = p[1:-1]
        elif len(p) >= 2 and p[0] == p[-1] == "'":
            p = p[1:-1]
        out.append(p)
    return tuple(out)


def _key_lines(text):
    """{TOML path tuple: first line}; an array of tables' items are (name..., index)."""
    lines, header, counts = {}, (), {}
    for no, raw in enumerate(text.splitlines(), 1):
        s = raw.strip()
        if not s or s.startswith("#"):
            continue
        if s.startswith("[[") and "]]" in s:
            name = _split_key(s[2:s.index("]]")])
            counts[name] = counts.get(name, -1) + 1
            header = name + (counts[name],)
        elif s.startswith("[") and "]" in s:
            header = _split_key(s[1:s.index("]")])
        elif "=" in s:
            header_key = header + _split_key(s.split("=", 1)[0])
            for i in range(1, len(header_key) + 1):
                lines.setdefault(header_key[:i], no)
            continue
        else:
            continue
        for i in range(1, len(header) + 1):
            lines.setdefault(header[:i], no)
    return lines


# ---------------------------------------------------------------------------------------------------
# The policy keys a grid may name, with their types (loaders/policy.hpp is the reference; a test runs
# colmatch on a policy with each of them, so that a key colmatch does not know fails there).

NUMBER, STRING, LIST = "a number", "a string", "a list"
_TOP = {"interval": NUMBER, "min_interval": NUMBER, "scheduler": STRING, "allocation": STRING,
        "backfill": STRING, "resource_availability": STRING, "throttle": LIST}
_WEIGHTS = {"credential", "queue_time", "expansion", "size"}
_CREDENTIALS = {"user", "group", "class", "account", "qos"}
_FBSNG_QUEUE = {"qpmin", "qpmax", "qpi", "qpd", "qpg", "spg"}
KEYS_HELP = ("interval, min_interval, scheduler, allocation, backfill, resource_availability, throttle, "
             "priority.{credential,queue_time,expansion,size}, credential_priority.KIND.NAME, fbsng.process_type, "
             "fbsng.queues.NAME.{QPmin,QPmax,QPI,QPD,QPG,SPG}, fbsng.process_types.NAME.{max_sections,max_slots,"
             "requirements,max.CONSUMABLE}, vov.wrappers, vov.dollars.NAME, vov.symbols.NAME; and until")


def policy_key_type(key):
    """The type a policy key (a tuple of its parts) takes, or None for a key colmatch does not read."""
    n = len(key)
    if n == 1:
        return _TOP.get(key[0])
    head = key[0]
    if head == "priority" and n == 2 and key[1] in _WEIGHTS:
        return NUMBER
    if head == "credential_priority" and n == 3 and key[1] in _CREDENTIALS:
        return NUMBER
    if head == "fbsng":
        if n == 2 and key[1] == "process_type":
            return STRING
        if n == 4 and key[1] == "queues" and key[3].lower() in _FBSNG_QUEUE:
            return NUMBER
        if key[1] == "process_types" and n == 4 and key[3] in ("max_sections", "max_slots"):
            return NUMBER
        if key[1] == "process_types" and n == 4 and key[3] == "requirements":
            return STRING
        if key[1] == "process_types" and n == 5 and key[3] == "max":
            return NUMBER
    if head == "vov":
        if n == 2 and key[1] == "wrappers":
            return LIST
        if n == 3 and key[1] in ("dollars", "symbols"):
            return STRING
    return None


def _type_ok(value, expected):
    if expected == NUMBER:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if expected == STRING:
        return isinstance(value, str)
    return isinstance(value, list)


# ---------------------------------------------------------------------------------------------------
# TOML out: a policy dict as [policy] tables (tomllib only reads).

def _toml_key(k):
    k = str(k)
    return k if k and all(c.isalnum() or c in "_-" for c in k) else json.dumps(k)


def _toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v != v:
            return "nan"
        if v in (float("inf"), float("-inf")):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # a JSON string is a TOML basic string
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_toml_key(k)} = {_toml_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(f"cannot write {type(v).__name__} in TOML")


def policy_toml(policy):
    """The text of a policy file holding `policy` (nested dicts) as its [policy] table."""
    out = []

    def table(d, name):
        out.append(f"[{name}]")
        subs = []
        for k, v in d.items():
            if isinstance(v, dict):
                subs.append((k, v))
            elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
                subs.append((k, v))
            else:
                out.append(f"{_toml_key(k)} = {_toml_value(v)}")
        for k, v in subs:
            if isinstance(v, dict):
                table(v, f"{name}.{_toml_key(k)}")
            else:
                for item in v:
                    out.append(f"[[{name}.{_toml_key(k)}]]")
                    out.extend(f"{_toml_key(a)} = {_toml_value(b)}" for a, b in item.items())

    table(policy, "policy")
    return "\n".join(out) + "\n"


def _set_path(d, key, value):
    for part in key[:-1]:
        nxt = d.get(part)
        if not isinstance(nxt, dict):
            nxt = d[part] = {}
        d = nxt
    d[key[-1]] = copy.deepcopy(value)


def _merge(base, over):
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(base.get(k), dict):
            _merge(base[k], v)
        else:
            base[k] = copy.deepcopy(v)
    return base


# ---------------------------------------------------------------------------------------------------
# The sweep file.

class Point:
    __slots__ = ("id", "input", "params", "policy_text", "argv", "files")


class Sweep:
    """A checked sweep: its inputs, axes and points. Raises SweepError naming file, line and key."""

    def __init__(self, spec, file="<spec>", text=None):
        self.file = file
        self.lines = _key_lines(text) if text is not None else {}
        self.base = os.path.dirname(os.path.abspath(file)) if text is not None else os.getcwd()
        known = {"name", "command", "until", "threads", "policy", "inputs", "grid", "point"}
        for k in spec:
            if k not in known:
                self._fail((k,), k, f"unknown key (expected {', '.join(sorted(known))})")
        self.name = self._typed(spec, "name", str, "a string", os.path.splitext(os.path.basename(file))[0])
        self.command = self._typed(spec, "command", str, "a string", "simulate")
        if self.command not in POINT_FILES:
            self._fail(("command",), "command", "expected simulate or match")
        self.until = spec.get("until")
        if "until" in spec and (not _type_ok(self.until, NUMBER) or self.command != "simulate"):
            self._fail(("until",), "until", "expected a number (with command = \"simulate\")")
        self.threads = self._typed(spec, "threads", int, "a whole number", 1)
        if isinstance(self.threads, bool) or not 1 <= self.threads <= 4096:
            self._fail(("threads",), "threads", "expected a whole number from 1 to 4096")
        self.policy = self._base_policy(spec.get("policy"))
        self.inputs = self._inputs(spec.get("inputs"))
        self.axes = self._grid(spec.get("grid", {}))
        self.points = self._points(spec.get("point", []))

    # -- helpers
    def _line(self, path):
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return 0

    def _fail(self, path, key, why):
        raise SweepError(self.file, self._line(tuple(path)), key, why)

    def _typed(self, spec, key, typ, what, default):
        if key not in spec:
            return default
        if not isinstance(spec[key], typ):
            self._fail((key,), key, f"expected {what}")
        return spec[key]

    def _path(self, p):
        return p if os.path.isabs(p) else os.path.normpath(os.path.join(self.base, p))

    def _base_policy(self, policy):
        if policy is None:
            return {}
        if isinstance(policy, str):
            import tomllib

            path = self._path(policy)
            try:
                with open(path, "rb") as f:
                    data = tomllib.load(f)
            except (OSError, tomllib.TOMLDecodeError) as e:
                self._fail(("policy",), "policy", f"cannot read {path}: {e}")
            policy = data["policy"] if isinstance(data.get("policy"), dict) else data
        elif not isinstance(policy, dict):
            self._fail(("policy",), "policy", "expected a file name or a table")
        for path, key, v in self._flatten(policy, ("policy",), ()):  # a file's keys: at the `policy` line
            if key == ("until",):
                self._fail(path, "policy.until", "until is not a policy key: give it at the top of the sweep file")
            self._check_value(path, key, v, "policy")
        return copy.deepcopy(policy)

    def _inputs(self, inputs):
        if not isinstance(inputs, dict) or not inputs:
            self._fail(("inputs",), "inputs", "expected one or more [inputs.NAME] tables (format and its files)")
        out = {}
        for name, entry in inputs.items():
            at = ("inputs", name)
            if not name or not all(c.isalnum() or c in "_.-" for c in name) or name.startswith("."):
                self._fail(at, f"inputs.{name}", "an input's name is letters, digits, '_', '-' and '.'")
            if not isinstance(entry, dict):
                self._fail(at, f"inputs.{name}", "expected a table: format = \"...\" and the format's files")
            fmt = entry.get("format", "native")
            if not isinstance(fmt, str):
                self._fail(at + ("format",), f"inputs.{name}.format", "expected a string")
            files = {}
            for opt, value in entry.items():
                if opt == "format":
                    continue
                key = f"inputs.{name}.{opt}"
                if not isinstance(value, str) or not value:
                    self._fail(at + (opt,), key, "expected a file name")
                path = self._path(value)
                if not os.path.isfile(path) or not os.access(path, os.R_OK):
                    why = "no such file" if not os.path.exists(path) else "not a readable file"
                    self._fail(at + (opt,), key, f"cannot read {path}: {why}")
                files[opt] = path
            if not files:
                self._fail(at, f"inputs.{name}", "names no input file")
            out[name] = (fmt, files)
        return out

    def _check_value(self, path, key, value, table):
        dotted = f"{table}.{'.'.join(key)}"
        if key == ("until",):
            if self.command != "simulate" or not _type_ok(value, NUMBER):
                self._fail(path, dotted, "expected a number (with command = \"simulate\")")
            return
        expected = policy_key_type(key)
        if expected is None:
            self._fail(path, dotted, f"unknown policy key (known: {KEYS_HELP})")
        if not _type_ok(value, expected):
            self._fail(path, dotted, f"expected {expected}, not {type(value).__name__} {value!r}")

    def _flatten(self, table, toml_path, key):
        for k, v in table.items():
            parts = tuple(str(k).split("."))
            if isinstance(v, dict):
                yield from self._flatten(v, toml_path + (k,), key + parts)
            else:
                yield toml_path + (k,), key + parts, v

    def _grid(self, grid):
        if not isinstance(grid, dict):
            self._fail(("grid",), "grid", "expected a table of key = [values]")
        axes = []
        for path, key, values in self._flatten(grid, ("grid",), ()):
            dotted = ".".join(key)
            if not isinstance(values, list):
                self._fail(path, f"grid.{dotted}", "expected a list of values")
            if not values:
                self._fail(path, f"grid.{dotted}", "an empty list: the grid would have no points")
            for v in values:
                self._check_value(path, key, v, "grid")
            if any(a[0] == key for a in axes):
                self._fail(path, f"grid.{dotted}", "given twice")
            axes.append((key, values))
        return axes

    def _points(self, explicit):
        if not isinstance(explicit, list) or not all(isinstance(p, dict) for p in explicit):
            self._fail(("point",), "point", "expected [[point]] tables")
        size = len(self.inputs)
        for _, values in self.axes:
            size *= len(values)
        if size + len(explicit) * len(self.inputs) > MAX_POINTS:
            self._fail(("grid",), "grid", f"more than {MAX_POINTS:,} points")
        if not self.axes and not explicit:
            self._fail(("grid",), "grid", "no points: give a [grid] of key = [values] or [[point]] tables")
        wanted = []  # (input, params as [(key, value)])
        for name in self.inputs:
            for combo in itertools.product(*(values for _, values in self.axes)):
                wanted.append((name, [(key, v) for (key, _), v in zip(self.axes, combo)]))
        for i, p in enumerate(explicit):
            at = ("point", i)
            names = list(self.inputs)
            params = []
            for path, key, v in self._flatten(p, at, ()):
                if key == ("input",):
                    if v not in self.inputs:
                        self._fail(path, f"point[{i}].input", f"no input {v!r} (inputs: {', '.join(self.inputs)})")
                    names = [v]
                    continue
                self._check_value(path, key, v, f"point[{i}]")
                params.append((key, v))
            wanted += [(name, params) for name in names]
        points, seen = [], set()
        for name, params in wanted:
            pt = self._point(name, params)
            if pt.id not in seen:  # the same run asked twice (a [[point]] that is also on the grid)
                seen.add(pt.id)
                points.append(pt)
        return points

    def _point(self, name, params):
        fmt, files = self.inputs[name]
        policy = {}
        if fmt == "native" and "farm" in files:  # what `simulate` without --policy would use
            policy = _native_farm_policy(files["farm"])
        _merge(policy, self.policy)
        until = self.until
        for key, v in params:
            if key == ("until",):
                until = v
            else:
                _set_path(policy, key, v)
        pt = Point()
        pt.input, pt.params = name, {".".join(k): v for k, v in params}
        pt.policy_text = policy_toml(policy)
        pt.files = files
        argv = [self.command, "--format", fmt]
        for opt in files:
            argv += [f"--{opt}", "{" + opt + "}"]
        argv += ["--threads", str(self.threads)]
        if until is not None:
            argv += ["--until", repr(float(until))]
        pt.argv = argv
        # an input named alike but changed (size or time) is another run: its points get new ids
        stamp = {k: [os.path.basename(v), os.stat(v).st_size, os.stat(v).st_mtime_ns] for k, v in files.items()}
        what = json.dumps({"argv": argv, "files": stamp, "policy": pt.policy_text}, sort_keys=True)
        pt.id = f"{name}-{hashlib.sha256(what.encode()).hexdigest()[:12]}"
        return pt

    def check_formats(self, cli):
        """Checks each input's format and option names against what `cli` takes (its --help): a typo is the
        sweep file's error, not every point's. Help text that does not read as expected checks nothing."""
        import re

        try:
            text = subprocess.run([cli, self.command, "--help"], capture_output=True, text=True, timeout=60).stdout
        except (OSError, subprocess.SubprocessError):
            return
        formats = re.search(r"--format TEXT:\{([^}]*)\}", text)
        options = set(re.findall(r"^\s+--([a-z][a-z0-9_-]*)\b", text, re.M)) - CLI_OWN_OPTIONS
        for name, (fmt, files) in self.inputs.items():
            if formats and fmt not in formats.group(1).split(","):
                self._fail(("inputs", name, "format"), f"inputs.{name}.format",
                           f"unknown format {fmt!r} (colmatch {self.command} takes {formats.group(1)})")
            for opt in files:
                if options and opt not in options:
                    self._fail(("inputs", name, opt), f"inputs.{name}.{opt}",
                               f"not an input option of colmatch (its input options: {', '.join(sorted(options))})")

    def describe(self):
        """sweep.json: the sweep's axes, inputs and points."""
        return {"name": self.name, "command": self.command,
                "axes": [{"key": ".".join(k), "values": v} for k, v in self.axes],
                "inputs": {n: {"format": f, "files": files} for n, (f, files) in self.inputs.items()},
                "points": [{"id": p.id, "input": p.input, "params": p.params} for p in self.points]}


def _native_farm_policy(farm):
    import tomllib

    try:
        with open(farm, "rb") as f:
            table = tomllib.load(f).get("policy", {})
    except (OSError, tomllib.TOMLDecodeError):
        return {}  # colmatch names the error when the point runs
    return {k: v for k, v in table.items() if k not in ("power", "grid_engine")} if isinstance(table, dict) else {}


def load_spec(spec):
    """A Sweep from a sweep.toml path or a dict of the same shape."""
    if isinstance(spec, dict):
        return Sweep(spec)
    import tomllib

    path = os.fspath(spec)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise SweepError(path, 0, "", f"cannot read: {e.strerror}") from None
    try:
        text = raw.decode("utf-8")
        data = tomllib.loads(text)
    except UnicodeDecodeError as e:
        raise SweepError(path, raw[:e.start].count(b"\n") + 1, "", "not UTF-8 text") from None
    except tomllib.TOMLDecodeError as e:
        msg = str(e)
        line = 0
        if "(at line " in msg:
            try:
                line = int(msg.rsplit("(at line ", 1)[1].split(",")[0])
            except ValueError:
                pass
            msg = msg.rsplit(" (at line ", 1)[0]
        raise SweepError(path, line, "", msg) from None
    return Sweep(data, path, text)


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


def complete(folder, command):
    """Whether `folder` holds a whole run of `command` (colmatch publishes a run's files together)."""
    return all(os.path.isfile(os.path.join(folder, f)) for f in POINT_FILES[command])


def run_point(task, shipped=None):
    """Runs one point. task: cli, id, command, argv (with {option} placeholders), files, policy, out (the
    run folder when the workers share the filesystem, else None). shipped: {option: bytes} of the input
    files (--ship-inputs). Returns a dict: status ("ok" or "failed"), error, seconds, and with shipped
    inputs the run's files {name: bytes}."""
    t0 = time.monotonic()
    result = {"id": task["id"], "status": "ok", "error": "", "reused": False, "host": os.uname().nodename}
    if task["out"] and complete(task["out"], task["command"]):  # a retry after the first attempt finished
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
            if task["out"] and complete(task["out"], task["command"]):
                result.update(reused=True, seconds=time.monotonic() - t0)
                return result
        if proc.returncode not in (0, 2) or not complete(out, task["command"]):
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


def open_lock(lock):
    """The lock beside an output folder, as colmatch opens it (loaders/writers/text.cpp open_lock): made
    readable by all, taken read-only by a user who may not write it. report.py takes it from here."""
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
        try:
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                return json.load(f)
        except (OSError, ValueError):
            return {}

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


def _client(scheduler, workers):
    import logging

    from distributed import Client, LocalCluster

    if scheduler:
        return Client(scheduler, timeout="30s"), None
    n = workers or os.cpu_count() or 1
    # the scheduler's HTTP server on a free port: a fixed one (8787) may be another cluster's
    cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0",
                           silence_logs=logging.ERROR)
    return Client(cluster), cluster


def run_sweep(spec, out, scheduler=None, workers=None, ship_inputs=False, cli=None, progress=None):
    """Runs a sweep; returns (Sweep, {point id: row}). Raises SweepError before writing anything."""
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
    # the lock a colmatch run takes on its --out (loaders/writers/text.cpp): `report`, `simulate --out` and
    # another sweep on this folder wait for this one
    lock = os.path.join(os.path.dirname(out), f".{os.path.basename(out)}.lock")
    lock_fd = open_lock(lock)
    try:
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SweepError(out, 0, "", f"another colmatch run is writing this folder (lock {lock})") from None
        os.makedirs(runs, exist_ok=True)
        os.makedirs(points_dir, exist_ok=True)
        return sweep, _drive(sweep, out, runs, points_dir, scheduler, workers, ship_inputs, cli, progress)
    finally:
        os.close(lock_fd)


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
        if complete(folder, sweep.command):
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
    from distributed import wait

    # the task's code travels with it: the workers need not import this file
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
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
            task = {"cli": cli, "id": p.id, "command": sweep.command, "argv": p.argv, "files": p.files,
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
    if args.workers is not None and args.scheduler:
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
