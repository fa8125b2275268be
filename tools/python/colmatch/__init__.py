"""colmatch from Python: match jobs to taskers, or simulate scheduling over time.

    import colmatch
    r = colmatch.match(farm="farm.toml", taskers="taskers.jsonl", jobs="jobs.jsonl")
    r = colmatch.match(format="google2011", machines="machine_events.csv.gz", tasks="task_events.csv.gz")
    r.status, r.tasker, r.reason, r.slots      # NumPy arrays viewing the engine's columns (read-only)
    r.to_pandas()                              # results.csv as a DataFrame; r.to_pandas("categories")
    s = colmatch.simulate(format="swf", log="kth.swf.gz", policy="policy.toml")
    s.start, s.end, s.to_pandas(), s.to_pandas("timeline")

Keyword arguments are the CLI's input options without their dashes. Bad input raises colmatch.LoadError
with .file, .line and .field. The GIL is released while loading and matching.
"""
import io

from ._colmatch import LoadError, Match, Simulation  # noqa: F401
from . import _colmatch

ASSIGNED, PENDING, REJECTED = 0, 1, 2
NO_TASKER = 2**32 - 1


def _args(inputs):
    return {k: str(v) for k, v in inputs.items() if v is not None}


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
    return SimulationResult(_colmatch.simulate(format, _args(inputs), policy or "", until, threads))
