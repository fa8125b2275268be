"""The sweep file of `colmatch sweep` (tools/sweep.py runs it): read, checked and turned into points.

A policy sweep: one `colmatch simulate` (or `match`) run per point of a grid of inputs x policy values,
run on Dask distributed (an embedded LocalCluster, or an existing cluster given by --scheduler), with one
row per point in DIR/sweep.csv. The same from Python: colmatch.sweep(spec, out=..., scheduler=None).

sweep.toml:

    command = "simulate"             # or "match"; the default is simulate
    until = 864000                   # optional: simulate's --until
    write = "schedule"               # optional: simulate's --write (default schedule: what the report reads)
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
import copy
import hashlib
import itertools
import json
import os
import subprocess

MAX_POINTS = 100_000  # a grid larger than this is refused: a sweep is a bounded list of runs
CLI_OWN_OPTIONS = {"help", "format", "out", "threads", "isa", "policy", "until", "pools", "job", "category",
                   "simulate", "save"}  # the CLI's options that are not an input's files
POINT_FILES = {"simulate": ("summary.json", "metrics.json", "schedule.csv"),
               "match": ("summary.json", "results.csv")}
# simulate's --write: the files a point writes, and those a complete point has (`colmatch report` of the
# sweep reads the metrics and each point's schedule.csv: the default writes those, not the timeline and
# cycles of every point; `metrics` leaves schedule.csv out too, and the report its wait-time CDFs)
WRITE_CHOICES = ("schedule", "metrics", "all")


def point_files(command, write):
    """The files a complete point of `command` run with --write `write` has."""
    if command == "simulate" and write == "metrics":
        return ("summary.json", "metrics.json")
    return POINT_FILES[command]




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

NUMBER, STRING, LIST, BOOLEAN = "a number", "a string", "a list", "true or false"
SCALAR = "a number, a string or true or false"
_TOP = {"interval": NUMBER, "min_interval": NUMBER, "scheduler": STRING, "allocation": STRING,
        "backfill": STRING, "reservation_depth": NUMBER, "compression": BOOLEAN, "resource_availability": STRING,
        "backfill_interval": NUMBER, "backfill_phase": SCALAR, "backfill_window": NUMBER, "backfill_max_jobs": NUMBER,
        "backfill_max_jobs_per_user": NUMBER, "backfill_max_jobs_per_association": NUMBER, "backfill_min_priority_reserve": NUMBER, "backfill_resolution": NUMBER, "backfill_min_age_reserve": NUMBER, "backfill_max_jobs_per_partition": NUMBER,
        "backfill_max_jobs_per_user_partition": NUMBER, "throttle": LIST}
_WEIGHTS = {"credential", "queue_time", "expansion", "size"}
_CREDENTIALS = {"user", "group", "class", "account", "qos"}
_FBSNG_QUEUE = {"qpmin", "qpmax", "qpi", "qpd", "qpg", "spg"}
# [policy.slurm]: slurm.conf's scheduling settings (loaders/slurm_settings.hpp), case-insensitive
_SLURM = {k.lower() for k in (
    "SchedulerType", "SchedulerParameters", "PriorityType", "PriorityWeightAge", "PriorityWeightFairshare",
    "PriorityWeightJobSize", "PriorityMaxAge", "PriorityDecayHalfLife", "PriorityCalcPeriod", "PriorityFavorSmall",
    "PriorityWeightPartition", "PriorityWeightQOS", "PriorityWeightAssoc", "PriorityWeightTRES", "PriorityFlags",
    "PriorityUsageResetPeriod", "FairShareDampeningFactor", "AccountingStorageType")}
KEYS_HELP = ("interval, min_interval, scheduler, allocation, backfill, reservation_depth, compression, "
             "resource_availability, "
             "throttle, "
             "priority.{credential,queue_time,expansion,size}, credential_priority.KIND.NAME, fbsng.process_type, "
             "fbsng.queues.NAME.{QPmin,QPmax,QPI,QPD,QPG,SPG}, fbsng.process_types.NAME.{max_sections,max_slots,"
             "requirements,max.CONSUMABLE}, vov.wrappers, vov.dollars.NAME, vov.symbols.NAME, backfill_interval, "
             "backfill_phase, backfill_window, backfill_max_jobs, backfill_max_jobs_per_user, backfill_max_jobs_per_association, backfill_resolution, backfill_min_age_reserve, "
             "backfill_max_jobs_per_partition, backfill_max_jobs_per_user_partition, "
             "backfill_min_priority_reserve, slurm.SETTING (slurm.conf's names: PriorityWeightFairshare, SchedulerParameters, ...), "
             "slurm.priority_calc_phase, slurm.associations; and until")


def _stamp(path):
    """What identifies an input in a point's id: a file's name, size and modification time; a folder's name
    and those of the files directly in it (a dump), in name order."""
    st = os.stat(path)
    if not os.path.isdir(path):
        return [os.path.basename(path), st.st_size, st.st_mtime_ns]
    inside = []
    for entry in sorted(os.scandir(path), key=lambda e: e.name):
        if entry.is_file():
            est = entry.stat()
            inside.append([entry.name, est.st_size, est.st_mtime_ns])
    return [os.path.basename(os.path.normpath(path)), inside]


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
    if head == "slurm" and n == 2:
        if key[1] == "priority_calc_phase":
            return NUMBER
        if key[1] == "associations":
            return LIST
        if key[1].lower() in _SLURM:
            return SCALAR
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
    if expected == SCALAR:
        return isinstance(value, (int, float, str, bool))
    if expected == BOOLEAN:
        return isinstance(value, bool)
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
        known = {"name", "command", "until", "write", "threads", "policy", "inputs", "grid", "point"}
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
        self.write = self._typed(spec, "write", str, "a string", "schedule")
        if self.write not in WRITE_CHOICES or ("write" in spec and self.command != "simulate"):
            self._fail(("write",), "write", f"expected {', '.join(WRITE_CHOICES)} (with command = \"simulate\")")
        self.needed = point_files(self.command, self.write)
        self.threads = self._typed(spec, "threads", int, "a whole number", 1)
        if isinstance(self.threads, bool) or not 1 <= self.threads <= 4096:
            self._fail(("threads",), "threads", "expected a whole number from 1 to 4096")
        self.policy = self._base_policy(spec.get("policy"))
        self._stamps = {}  # input name -> its files' names, sizes and modification times (_inputs)
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
                # a file, or a folder (a Grid Engine or Slurm dump: --dump); isfile and isdir first: they
                # answer False for a name os.access cannot take (an embedded NUL)
                readable = (os.path.isfile(path) and os.access(path, os.R_OK)) or \
                           (os.path.isdir(path) and os.access(path, os.R_OK | os.X_OK))
                if not readable:
                    why = "no such file" if not os.path.exists(path) else "not a readable file or folder"
                    self._fail(at + (opt,), key, f"cannot read {path}: {why}")
                files[opt] = path
            if not files:
                self._fail(at, f"inputs.{name}", "names no input file")
            out[name] = (fmt, files)
            # what identifies the files in a point's id (an input replaced by another makes new points),
            # read once per input, not per point
            self._stamps[name] = {k: _stamp(v) for k, v in files.items()}
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
        what = json.dumps({"argv": argv, "files": self._stamps[name], "policy": pt.policy_text}, sort_keys=True)
        pt.id = f"{name}-{hashlib.sha256(what.encode()).hexdigest()[:12]}"
        # which files it writes is not what it runs: the same id (a point written with more is complete)
        if self.command == "simulate":
            pt.argv += ["--write", self.write]
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
        return {"name": self.name, "command": self.command, "write": self.write,
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


SPEC_LIMIT = 16 << 20  # bytes of a sweep file: its grids and points are written by hand or by a script
JSON_LIMIT = 64 << 20  # bytes: a run's summary.json and metrics.json are kilobytes; more is not colmatch's


def json_object(path):
    """The JSON object of a colmatch output file (summary.json, metrics.json), read by the sweep and by
    report. Raises ValueError saying why for a file that is not a regular one (a link to /dev/zero), one
    past JSON_LIMIT, text that is not UTF-8 JSON, or JSON that is not an object; OSError (FileNotFoundError
    among them) passes through."""
    import stat

    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise ValueError("not a regular file")
    if st.st_size > JSON_LIMIT:
        raise ValueError(f"{st.st_size} bytes, more than a colmatch JSON output ever holds ({JSON_LIMIT})")
    with open(path, "rb") as f:
        raw = f.read(JSON_LIMIT + 1)
    try:
        data = json.loads(raw.decode("utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"line {e.lineno}: {e.msg}") from None
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise ValueError(f"not JSON text ({type(e).__name__})") from None
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    return data



def load_spec(spec):
    """A Sweep from a sweep.toml path or a dict of the same shape."""
    if isinstance(spec, dict):
        return Sweep(spec)
    import tomllib

    path = os.fspath(spec)
    try:
        # a regular file of at most SPEC_LIMIT bytes (`colmatch sweep /dev/zero` read without end)
        import stat

        if not stat.S_ISREG(os.stat(path).st_mode):  # (before opening: a FIFO's open would wait for a writer)
            raise SweepError(path, 0, "", "not a regular file")
        with open(path, "rb") as f:
            raw = f.read(SPEC_LIMIT + 1)
    except OSError as e:
        raise SweepError(path, 0, "", f"cannot read: {e.strerror}") from None
    if len(raw) > SPEC_LIMIT:
        raise SweepError(path, 0, "", f"more than {SPEC_LIMIT >> 20} MiB: not a sweep file")
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
