"""colmatch from Python: match jobs to taskers, or simulate scheduling over time.

    import colmatch
    r = colmatch.match(farm="farm.toml", taskers="taskers.jsonl", jobs="jobs.jsonl")
    r = colmatch.match(format="google2011", machines="machine_events.csv.gz", tasks="task_events.csv.gz")
    r.status, r.tasker, r.reason, r.slots      # NumPy arrays viewing the engine's columns (read-only)
    r.to_pandas()                              # results.csv as a DataFrame; r.to_pandas("categories")
    s = colmatch.simulate(format="swf", log="kth.swf.gz", policy="policy.toml")
    s.start, s.end, s.to_pandas(), s.to_pandas("timeline")

Keyword arguments are the CLI's input options without their dashes (one the format does not take raises
TypeError naming those it does). Bad input raises colmatch.LoadError
with .file, .line and .field; a policy the farm cannot take raises colmatch.PolicyError (a ValueError)
naming the policy's file. The GIL is released while loading and matching.

A farm built in memory, without files (the native format's rules; columns as arrays):

    farm = colmatch.Farm(
        attributes=[dict(name="arch"), dict(name="slots", type="int", consumable=True),
                    dict(name="mem", type="memory", consumable=True, per="slot", default="1G")],
        taskers={"name": ["n1", "n2"], "arch": ["lx-amd64", "lx-arm64"], "slots": np.array([8, 4]),
                 "mem": ["32G", "16G"]},
        jobs={"id": ["j1", "j2"], "requests": ["arch==lx-amd64", "mem>=8G"], "slots": [2, 1]})
    r = farm.match(); s = farm.simulate(until=3600)

A policy sweep on Dask distributed (an embedded LocalCluster, or an existing cluster by its address), as
`colmatch sweep` runs it; a sweep file that cannot run raises colmatch.SweepError (.file, .line, .key):

    df = colmatch.sweep("sweep.toml", out="sweep/")            # one row per point, as sweep.csv
    df = colmatch.sweep({"inputs": {"kth": {"format": "swf", "log": "kth.swf.gz"}},
                         "grid": {"backfill": ["none", "easy"]}}, out="sweep/", scheduler="tcp://host:8786")
"""
import io
import json
import math
from collections.abc import Mapping

from ._colmatch import LoadError, Match, PolicyError, Simulation  # noqa: F401
from . import _colmatch
from ._sweep import SweepError  # noqa: F401

ASSIGNED, PENDING, REJECTED = 0, 1, 2
NO_TASKER = 2**32 - 1


def _args(inputs):
    return {k: str(v) for k, v in inputs.items() if v is not None}


def _policy_path(policy):
    """The policy file's path as the engine takes it: None for the farm's own [policy], else a path."""
    import os

    if policy is None:
        return ""
    if isinstance(policy, (str, os.PathLike)):
        return os.fspath(policy)
    raise TypeError(f"policy: expected the path of a policy TOML file, not {type(policy).__name__} "
                    "(a [policy] table goes to colmatch.Farm(policy=...) or into farm.toml)")


def _frame(text):
    import pandas as pd

    # every field as the file has it: a frame equals the CLI's file row for row
    return pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)


class MatchResult:
    """One match: per-job arrays (input order) and the output files as frames."""

    def __init__(self, raw):
        self._raw = raw
        self.status, self.tasker, self.reason, self.slots = raw.status, raw.tasker, raw.reason, raw.slots
        self.job_ids, self.tasker_names = raw.job_ids, raw.tasker_names

    def to_pandas(self, what="results"):
        """'results' (results.csv) or 'categories' (categories.csv) as a DataFrame of strings."""
        texts = {"results": self._raw.results_csv, "categories": self._raw.categories_csv}
        if what not in texts:
            raise ValueError("expected 'results' or 'categories'")
        return _frame(texts[what]())


class SimulationResult:
    """One simulation: per-job start, end and reason arrays, and the output files as frames."""

    def __init__(self, raw):
        self._raw = raw
        self.start, self.end, self.reason, self.job_ids = raw.start, raw.end, raw.reason, raw.job_ids

    def metrics(self):
        import json

        return json.loads(self._raw.metrics_json())

    def to_pandas(self, what="schedule"):
        """'schedule', 'timeline' or 'cycles' (schedule.csv, timeline.csv, cycles.csv) as a DataFrame of strings."""
        texts = {"schedule": self._raw.schedule_csv, "timeline": self._raw.timeline_csv,
                 "cycles": self._raw.cycles_csv}
        if what not in texts:
            raise ValueError("expected 'schedule', 'timeline' or 'cycles'")
        return _frame(texts[what]())


def match(format="native", threads=0, **inputs):
    """Loads the inputs (the CLI's options: farm=, taskers=, jobs=, hosts=; machines=, tasks=; ...) and matches."""
    return MatchResult(_colmatch.match(format, _args(inputs), threads))


def simulate(format="native", policy=None, until=float("inf"), threads=0, **inputs):
    """Loads the inputs and simulates over time with the policy file (default: the farm's [policy])."""
    return SimulationResult(_colmatch.simulate(format, _args(inputs), _policy_path(policy), until, threads))


def sweep(spec, out, scheduler=None, workers=None, ship_inputs=False, progress=False, cli=None):
    """Runs a sweep (a sweep.toml path, or a dict of the same tables; relative paths in a dict are relative
    to the working folder) into the folder `out`: each point's outputs in out/runs/<point>/, out/sweep.csv.
    scheduler: a Dask scheduler's address (default: a LocalCluster of `workers` processes, one per core).
    cli: the colmatch binary the points run (default: $COLMATCH_CLI, else colmatch on PATH). Returns
    sweep.csv as a DataFrame (a failed point is a row with status "failed" and its error); raises
    SweepError when the sweep cannot start (nothing is written then)."""
    import os

    import pandas as pd

    from . import _sweep

    _sweep.run_sweep(spec, out, scheduler=scheduler, workers=workers, ship_inputs=ship_inputs, cli=cli,
                     progress=progress)
    return pd.read_csv(os.path.join(os.fspath(out), "sweep.csv"), keep_default_na=False,
                       na_values={c: [""] for c in _sweep.FIGURES["simulate"] + _sweep.FIGURES["match"]})


_TASKER_FIELDS = {"name", "power", "host"}
_JOB_TEXT = {"id": "job_ids", "requests": "requests", "soft": "soft", "owner": "owners", "group": "groups",
             "queue": "queues", "account": "accounts"}
_JOB_NUMBERS = {"slots", "priority", "submit", "runtime", "walltime"}


def _toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        if isinstance(v, float) and not math.isfinite(v):
            return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # a JSON string is a TOML basic string
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, Mapping):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {_toml_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(f"cannot write {type(v).__name__} {v!r} in TOML")


def _farm_toml(name, attributes, policy, global_values):
    lines = [f"name = {json.dumps(name)}"]
    for table, values in (("policy", policy), ("global", global_values)):
        if values:
            lines.append(f"[{table}]")
            lines += [f"{json.dumps(str(k))} = {_toml_value(v)}" for k, v in values.items()]
    for a in attributes:
        lines.append("[[attribute]]")
        lines += [f"{json.dumps(str(k))} = {_toml_value(v)}" for k, v in a.items()]
    return "\n".join(lines) + "\n"


def _column(values):
    """(numbers, None) for a numeric array, else (None, texts) with None where a row has no value."""
    import numpy as np

    a = np.asarray(values)
    if a.ndim != 1:
        raise ValueError("expected one value per row")
    if a.dtype.kind in "biuf":
        return a.astype(np.float64), None
    texts = []
    for x in values:
        if x is None or (isinstance(x, float) and math.isnan(x)):
            texts.append(None)
        elif isinstance(x, (bool, np.bool_)):
            texts.append("true" if x else "false")
        else:
            texts.append(str(x))
    return None, texts


class Farm:
    """A farm and its jobs in memory: complex attributes as farm.toml's [[attribute]] tables (dicts),
    taskers as columns (a dict: "name", optional "power" and "host", then one array per attribute, a row
    without a value as NaN or None), jobs as columns ("id", "requests" in the request syntax, optional
    "soft", "slots", "owner", "group", "priority", "submit", "runtime", "walltime", "queue", "account",
    and "resources": a dict of consumable -> amounts). Errors raise LoadError naming "taskers" or "jobs",
    the row (1-based, as .line) and the field. policy and global_values are farm.toml's [policy] and
    [global] tables."""

    def __init__(self, attributes, taskers, jobs=None, name="farm", policy=None, global_values=None):
        self.attributes, self.taskers = list(attributes), dict(taskers)
        self.jobs = dict(jobs) if jobs is not None else {"id": []}
        self.name, self.policy, self.global_values = name, policy or {}, global_values or {}

    def _inputs(self):
        t, j = self.taskers, self.jobs
        if "name" not in t:
            raise ValueError("taskers needs a 'name' column")
        if "id" not in j:
            raise ValueError("jobs needs an 'id' column")
        d = {"farm_toml": _farm_toml(self.name, self.attributes, self.policy, self.global_values),
             "tasker_names": [str(x) for x in t["name"]],
             "tasker_power": t.get("power"),
             "tasker_hosts": [str(x) for x in t["host"]] if "host" in t else None,
             "columns": [(k, *_column(v)) for k, v in t.items() if k not in _TASKER_FIELDS],
             "resources": [(k, *_column(v)) for k, v in (j.get("resources") or {}).items()]}
        for k, v in j.items():
            if k in _JOB_TEXT:
                d[_JOB_TEXT[k]] = ["" if x is None else str(x) for x in v]
            elif k in _JOB_NUMBERS:
                d[k] = _numbers(v, k)
            elif k != "resources":
                raise ValueError(f"jobs: unknown column '{k}'")
        return d

    def match(self, threads=0):
        """Matches the jobs to the taskers: a MatchResult, as colmatch.match returns."""
        return MatchResult(_colmatch.match_memory(self._inputs(), threads))

    def simulate(self, policy=None, until=float("inf"), threads=0):
        """Simulates over time (jobs' submit, runtime, walltime) with a policy file (default: policy=)."""
        return SimulationResult(_colmatch.simulate_memory(self._inputs(), _policy_path(policy), until, threads))


def _numbers(values, name):
    import numpy as np

    try:
        return np.asarray([math.nan if x is None else x for x in values], dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"jobs: column '{name}': expected numbers") from None
