"""Reading a colmatch run's output folder for colmatch report (report.py, report_sweep.py): its CSV files in
chunks with their numbers checked, its JSON files, the waits of a schedule, the steps of a CDF. Every
error is a ReportError naming the file (and line) at fault."""

import os
import re

from sweep_spec import json_object  # beside this file (tools/), as report.py finds this one


class ReportError(Exception):
    pass


def _ends_with_newline(path):
    """colmatch ends every line of its CSVs with a newline: a file that does not was cut short."""
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        if f.tell() == 0:
            return True
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"


def _lines(path):
    with open(path, "rb") as f:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))


def _read_csv(folder, name, columns):
    """A small CSV (sweep.csv) whole, as text; its `columns` must be there."""
    import pandas as pd

    path = os.path.join(folder, name)
    _header(path)
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except Exception as e:  # pandas' parser errors name the line
        raise ReportError(f"{path}: {e}")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ReportError(f"{path}: line 1: no column {', '.join(missing)} (not a colmatch output file?)")
    return frame


def _numbers(frame, column, name):
    import pandas as pd

    values = pd.to_numeric(frame[column].replace("", "nan"), errors="coerce")
    bad = values.isna() & (frame[column] != "")
    if bad.any():
        line = int(bad.to_numpy().nonzero()[0][0]) + 2
        raise ReportError(f"{name}: line {line}: field '{column}': not a number: {frame[column].iloc[line - 2]!r}")
    return values.to_numpy(dtype=float)


CHUNK_ROWS = 50_000  # rows of a large CSV parsed at a time: memory is one chunk, not the file


def _header(path):
    """The column names of a colmatch CSV; ReportError when it is missing or cut short."""
    import csv

    try:
        if not _ends_with_newline(path):
            raise ReportError(f"{path}: line {_lines(path) + 1}: the file ends inside a line: cut short (run "
                              "colmatch again)")
        with open(path, newline="", encoding="utf-8") as f:
            return next(csv.reader(f), [])
    except FileNotFoundError:
        raise ReportError(f"{path}: missing (run colmatch match or simulate with --out {os.path.dirname(path)} "
                          "first)")


def _raise_bad_number(path, numeric):
    """Names the first field of the `numeric` columns that is not a number (line and field), streaming the
    file; returns when there is none."""
    import csv

    with open(path, newline="", encoding="utf-8") as f:
        rows = csv.reader(f)
        header = next(rows, [])
        where = [(c, header.index(c)) for c in numeric if c in header]
        for line, row in enumerate(rows, start=2):
            for c, i in where:
                v = row[i] if i < len(row) else ""
                if v == "":
                    continue
                try:
                    float(v)
                except ValueError:
                    raise ReportError(f"{path}: line {line}: field '{c}': not a number: {v!r}") from None


def _scan(folder, name, columns, numeric=()):
    """The CSV's `columns` in chunks of CHUNK_ROWS rows: yields (line of the chunk's first row, frame), the
    `numeric` columns as float64 (an empty field is NaN), the others as text. Memory is one chunk whatever
    the file's size (read whole, as text, a 10M-job schedule.csv took 11x its size). A field that is not
    a number, a missing column or a file cut short is a ReportError naming file, line and field."""
    import pandas as pd

    path = os.path.join(folder, name)
    header = _header(path)
    missing = [c for c in columns if c not in header]
    if missing:
        raise ReportError(f"{path}: line 1: no column {', '.join(missing)} (not a colmatch output file?)")
    types = {c: ("float64" if c in numeric else str) for c in columns}
    line = 2
    try:
        with pd.read_csv(path, usecols=list(columns), dtype=types, keep_default_na=False,
                         na_values={c: [""] for c in numeric}, chunksize=CHUNK_ROWS) as reader:
            for chunk in reader:
                yield line, chunk
                line += len(chunk)
    except pd.errors.ParserError as e:  # pandas' parser errors name the line
        raise ReportError(f"{path}: {e}") from None
    except ValueError as e:  # a field that is not a number: name it
        _raise_bad_number(path, numeric)
        raise ReportError(f"{path}: {e}") from None


def _read_numbers(folder, name, columns, also=None):
    """The CSV's `columns` (and every column whose name `also` accepts) as float64, chunk by chunk into one
    frame: the small files of a run (categories.csv, timeline.csv, cycles.csv), 8 bytes a field."""
    import pandas as pd

    path = os.path.join(folder, name)
    wanted = list(columns) + [c for c in _header(path) if also is not None and also(c) and c not in columns]
    chunks = [chunk for _, chunk in _scan(folder, name, wanted, numeric=wanted)]
    return pd.concat(chunks, ignore_index=True) if chunks else pd.DataFrame({c: [] for c in wanted}, dtype=float)


def _first_rows(job, last):
    """Which rows start a job (a job's rows are consecutive in results.csv and schedule.csv, one per
    tasker it runs on); `last` is the job of the row before the chunk. (mask, the chunk's last job)."""
    import numpy as np

    first = np.ones(len(job), dtype=bool)
    if len(job):
        first[0] = job[0] != last
        first[1:] = job[1:] != job[:-1]
        last = job[-1]
    return first, last


def _reason_class(reason):
    """A reason's short form: its first part, with the attribute or credential kind its detail starts with
    ("no eligible tasker: mem>=8G matches 0 of 5,000" -> "no eligible tasker: mem";
    "throttled: user alice max_jobs 2" -> "throttled: user"); counts and values are left out."""
    if not reason:
        return "(no reason)"
    head, _, detail = reason.partition(":")
    word = re.match(r"\s*([A-Za-z_][A-Za-z0-9_.]*)", detail)
    if head in ("no eligible tasker", "throttled") and word:
        return f"{head}: {word.group(1)}"
    return head.strip()


def _count_outcomes(counts, status, reason, assigned_word):
    """Adds one chunk's jobs (their first rows' status and reason) to the Counter `counts` of jobs per
    outcome: assigned (or started), then pending and rejected per reason's short form."""
    import pandas as pd

    pairs = pd.DataFrame({"s": status, "r": reason}).value_counts()
    for (s, r), n in pairs.items():
        counts[s if s == assigned_word else f"{s}: {_reason_class(r)}"] += int(n)


def _check_jobs(have, summary, name):
    """A job table (results.csv, schedule.csv) names every job of the run: fewer jobs than summary.json
    counts means the file lost rows (cut at a line's end)."""
    want = summary.get("jobs")
    if isinstance(want, (int, float)) and want >= 0 and have != int(want):
        raise ReportError(f"{name}: {have} jobs, summary.json counts {int(want)}: the file is not the run's "
                          "whole table (cut short? run colmatch again)")


def started_waits(folder):
    """The sorted waits of the started jobs of a simulate folder's schedule.csv, read in chunks."""
    import numpy as np

    waits, last = [], None
    for _, chunk in _scan(folder, "schedule.csv", ["job", "wait", "status"], numeric=("wait",)):
        first, last = _first_rows(chunk["job"].to_numpy(dtype=object), last)
        waits.append(chunk["wait"].to_numpy()[first & (chunk["status"].to_numpy(dtype=object) == "started")])
    return np.sort(np.concatenate(waits)) if waits else np.zeros(0)


def read_json_object(path):
    """A JSON object from a colmatch output file (sweep_spec.json_object: a regular file, bounded, UTF-8
    JSON, an object), else ReportError naming the file. FileNotFoundError passes through."""
    try:
        return json_object(path)
    except FileNotFoundError:
        raise
    except (OSError, ValueError) as e:
        raise ReportError(f"{path}: {e}") from None


def _read_json(folder, name):
    try:
        return read_json_object(os.path.join(folder, name))
    except FileNotFoundError:
        return {}


CDF_POINTS = 4000  # steps drawn of a CDF: at 100 dpi a figure is about 1,100 pixels wide


def cdf_steps(values):
    """(x, y) for a step plot (where="post") of the empirical CDF of the sorted `values`: every value
    while they are at most CDF_POINTS, else CDF_POINTS evenly spaced ranks with the first and the last,
    so a figure of 10M jobs draws as many points as one of 4,000 (and looks the same)."""
    import numpy as np

    n = len(values)
    rank = np.arange(n) if n <= CDF_POINTS else np.unique(np.linspace(0, n - 1, CDF_POINTS).astype(np.int64))
    return np.concatenate([[0], values[rank]]), np.concatenate([[0], (rank + 1) / n])
