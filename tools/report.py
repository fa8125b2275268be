#!/usr/bin/python3
"""colmatch report OUT_DIR: report.html with PNG figures beside it, from the files a run wrote there.

A match folder (results.csv, categories.csv, summary.json) gets: eligible taskers per job category and
the jobs by outcome and pending reason. A simulate folder (schedule.csv, timeline.csv, cycles.csv,
metrics.json, summary.json) gets: utilisation and queue length over time, the wait-time CDF, slot
shares per queue and per user over time, the scheduler's time per cycle, and the jobs by outcome. A sweep
folder (sweep.csv, sweep.json, runs/) gets a page comparing its points (report_sweep.py).

Reads only the output files (no engine): it can be run on a folder from any colmatch run, and again.
Every file is written to a temporary name and renamed; report.html last, so a reader never sees a page
whose figures are missing. Errors (no run in the folder, a file without the columns it should have)
name the file and exit 1. Needs Debian's python3-matplotlib, python3-numpy and python3-pandas.
"""
import html
import os
import re
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # report_data.py beside it, however loaded
from report_data import (  # noqa: E402
    ReportError, _scan, _read_numbers, _first_rows, _count_outcomes, _check_jobs, _read_json, cdf_steps)

FIGURE_DPI = 100
TOP = 8  # queues or users drawn one by one in the shares; the rest are "other"


# A temporary of this script: `.report-<pid>-<random>.<ext>.tmp` (loaders/writers/text.cpp lets a run
# replace a folder holding them); also the fixed names of earlier versions.
STALE = re.compile(r"^\.report-\d+-[0-9a-f]+\.[a-z]+\.tmp$|^\.report\.html\.tmp$|^\.fig_[a-z_]+\.png\.tmp$")


def _create(folder, ext):
    """A new temporary file in `folder`, created exclusively and never through a link: (path, file)."""
    for _ in range(100):
        path = os.path.join(folder, f".report-{os.getpid()}-{os.urandom(6).hex()}.{ext}.tmp")
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        except FileExistsError:
            continue
        return path, os.fdopen(fd, "wb")
    raise ReportError(f"{folder}: cannot create a temporary file")


def _clear_stale(folder):
    """Removes the temporaries of reports that were killed (the caller holds the folder's lock): a link
    there is unlinked, never followed."""
    for name in os.listdir(folder):
        if STALE.match(name):
            os.unlink(os.path.join(folder, name))


class Figures:
    """Saves figures into the folder under temporary names; publish() renames them into place."""

    def __init__(self, folder):
        self.folder, self.items, self.pending = folder, [], []

    def save(self, fig, name, title, caption):
        import matplotlib.pyplot as plt

        tmp, f = _create(self.folder, "png")
        self.pending.append((tmp, os.path.join(self.folder, name)))
        with f:
            fig.savefig(f, dpi=FIGURE_DPI, format="png", bbox_inches="tight")
        plt.close(fig)
        self.items.append((name, title, caption))

    def publish(self):
        for tmp, final in self.pending:
            os.replace(tmp, final)

    def discard(self):
        for tmp, _ in self.pending:
            if os.path.lexists(tmp):
                os.unlink(tmp)


def _reasons_figure(figs, counts, what):
    import matplotlib.pyplot as plt

    items = counts.most_common(12)
    rest = sum(counts.values()) - sum(n for _, n in items)
    if rest:
        items.append(("other reasons", rest))
    labels = [k if len(k) <= 60 else k[:57] + "..." for k, _ in items][::-1]
    values = [n for _, n in items][::-1]
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(items) + 1.5))
    bars = ax.barh(range(len(values)), values, color="#4472c4")
    ax.set_yticks(range(len(values)), labels)
    ax.set_xlabel("jobs")
    ax.set_title(f"Jobs by outcome and reason ({sum(counts.values()):,} jobs)")
    ax.bar_label(bars, labels=[f"{v:,}" for v in values], padding=3, fontsize=8)
    ax.margins(x=0.15)
    figs.save(fig, "fig_reasons.png", "Jobs by outcome and reason",
              f"Every job of the {what}, by outcome; pending and rejected jobs by the first part of their reason.")


def match_report(folder, figs):
    import matplotlib.pyplot as plt
    import numpy as np

    from collections import Counter

    summary = _read_json(folder, "summary.json")
    counts, last, have = Counter(), None, 0
    for _, chunk in _scan(folder, "results.csv", ["job", "status", "reason"]):
        first, last = _first_rows(chunk["job"].to_numpy(dtype=object), last)
        have += int(first.sum())
        _count_outcomes(counts, chunk["status"].to_numpy(dtype=object)[first],
                        chunk["reason"].to_numpy(dtype=object)[first], "assigned")
    _check_jobs(have, summary, os.path.join(folder, "results.csv"))
    cats = _read_numbers(folder, "categories.csv", ["jobs", "eligible_taskers"])
    taskers = int(summary.get("taskers", 0))
    eligible = cats["eligible_taskers"].to_numpy()
    jobs = cats["jobs"].to_numpy()

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    top = max(float(eligible.max()) if len(eligible) else 1.0, 1.0)
    bins = np.unique(np.concatenate([[0, 1], np.geomspace(1, top + 1, 30)]))
    left.hist(eligible, bins=bins, color="#4472c4")
    left.set_xscale("symlog", linthresh=1)
    left.set_xlabel("eligible taskers")
    left.set_ylabel("job categories")
    left.set_title(f"{len(cats):,} job categories")
    order = np.argsort(eligible, kind="stable")
    x = eligible[order]
    y = np.cumsum(jobs[order]) / max(jobs.sum(), 1)
    right.step(np.concatenate([[0], x]), np.concatenate([[0], y]), where="post", color="#c55a11")
    right.set_xscale("symlog", linthresh=1)
    right.set_ylim(0, 1.02)
    right.set_xlabel("eligible taskers of the job's category")
    right.set_ylabel("fraction of jobs (at most x)")
    right.set_title(f"{int(jobs.sum()):,} jobs" + (f" over {taskers:,} taskers" if taskers else ""))
    right.grid(alpha=0.3)
    figs.save(fig, "fig_eligible.png", "Eligible taskers per job category",
              "Left: how many job categories have a given number of eligible taskers (0 = none). "
              "Right: the fraction of jobs whose category has at most that many.")

    _reasons_figure(figs, counts, "match")
    return summary, {}


def _step_integral(starts, ends, weights, edges, piece=1 << 18):
    """The integral of sum_i weights[i] * [starts[i] <= t < ends[i]] over each [edges[k], edges[k+1]),
    summed over pieces of `piece` intervals (it is linear in them): memory is one piece."""
    import numpy as np

    if len(starts) > piece:
        return sum(_step_integral(starts[i:i + piece], ends[i:i + piece], weights[i:i + piece], edges, piece)
                   for i in range(0, len(starts), piece))

    def area_to(ts):  # integral from -inf to each t of the step function
        # each interval contributes w * clip(t - start, 0, end - start)
        times = np.concatenate([starts, ends])
        slope = np.concatenate([weights, -weights])
        order = np.argsort(times, kind="stable")
        times, slope = times[order], slope[order]
        rate = np.cumsum(slope)  # rate just after times[k]
        area = np.concatenate([[0.0], np.cumsum(rate[:-1] * np.diff(times))]) if len(times) else np.zeros(0)
        k = np.searchsorted(times, ts, side="right") - 1
        out = np.zeros(len(ts))
        ok = k >= 0
        out[ok] = area[k[ok]] + rate[k[ok]] * (ts[ok] - times[k[ok]])
        return out

    a = area_to(edges)
    return np.diff(a)


def _shares_figure(figs, rows, column, name, title, edges):
    """`rows`: the started rows' start, end and slots arrays and, per column, (codes, names)."""
    import matplotlib.pyplot as plt
    import numpy as np

    codes, names = rows[column]
    labels = ["(none)" if n == "" else n for n in names]
    totals = np.bincount(codes, weights=rows["slots"] * (rows["end"] - rows["start"]), minlength=len(names))
    order = sorted(range(len(names)), key=lambda i: (-totals[i], labels[i]))
    shown = order[:TOP]
    widths = np.diff(edges)
    series, legend = [], []
    picks = [(labels[i], codes == i) for i in shown]
    if len(names) > TOP:
        picks.append(("other", ~np.isin(codes, shown)))
    for label, sel in picks:
        series.append(_step_integral(rows["start"][sel], rows["end"][sel], rows["slots"][sel], edges) / widths)
        legend.append(label)
    total = np.sum(series, axis=0) if series else np.zeros(len(widths))
    shares = [np.divide(x, total, out=np.zeros_like(x), where=total > 0) for x in series]
    fig, ax = plt.subplots(figsize=(11, 4))
    mid = (edges[:-1] + edges[1:]) / 2 / 3600
    ax.stackplot(mid, shares, labels=legend, step="mid")
    ax.set_ylim(0, 1)
    ax.set_xlabel("simulated time (hours)")
    ax.set_ylabel("share of the slots in use")
    ax.set_title(title)
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8)
    figs.save(fig, name, title,
              f"Of the slots that running jobs hold, the share of each {column} (the {TOP} largest; the rest as "
              f"'other'), in {len(edges) - 1} intervals of the run.")


def _read_schedule(folder, summary):
    """One pass over schedule.csv in chunks (memory: one chunk, and about 40 bytes per started row for
    the figures): the started rows' start, end, slots and queue and user codes, the started jobs' waits
    and the jobs per outcome. Checks that it names summary.json's count of jobs."""
    from collections import Counter
    import numpy as np

    parts = {"start": [], "end": [], "slots": [], "queue": [], "user": [], "wait": []}
    tables = {"queue": {}, "user": {}}
    counts, last, have = Counter(), None, 0
    for _, chunk in _scan(folder, "schedule.csv", ["job", "start", "end", "wait", "slots", "queue", "user",
                                                   "status", "reason"],
                          numeric=("start", "end", "wait", "slots")):
        first, last = _first_rows(chunk["job"].to_numpy(dtype=object), last)
        have += int(first.sum())
        status = chunk["status"].to_numpy(dtype=object)
        started = status == "started"
        for c in ("start", "end", "slots"):
            parts[c].append(chunk[c].to_numpy()[started])
        parts["wait"].append(chunk["wait"].to_numpy()[first & started])
        for c in ("queue", "user"):  # a code per row, the names once
            values = chunk[c].to_numpy(dtype=object)[started].astype(str)
            uniq, inverse = np.unique(values, return_inverse=True)
            table = tables[c]
            code = np.array([table.setdefault(u, len(table)) for u in uniq], dtype=np.int32)
            parts[c].append(code[inverse].astype(np.int32) if len(values) else np.zeros(0, dtype=np.int32))
        _count_outcomes(counts, status[first], chunk["reason"].to_numpy(dtype=object)[first], "started")
    _check_jobs(have, summary, os.path.join(folder, "schedule.csv"))
    join = {}
    for c in list(parts):  # one column at a time, its pieces freed as it is joined
        pieces = parts.pop(c)
        join[c] = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int32 if c in tables else float)
        del pieces
    rows = {c: join[c] for c in ("start", "end", "slots")}
    for c in ("queue", "user"):
        names = [""] * len(tables[c])
        for n, i in tables[c].items():
            names[i] = n
        rows[c] = (join[c], names)
    return rows, np.sort(join["wait"]), counts


def simulate_report(folder, figs):
    import matplotlib.pyplot as plt
    import numpy as np

    summary, metrics = _read_json(folder, "summary.json"), _read_json(folder, "metrics.json")
    rows, waits, counts = _read_schedule(folder, summary)
    timeline = _read_numbers(folder, "timeline.csv", ["time", "running", "queued"],
                             also=lambda c: c.startswith(("used_", "offered_")))
    cycles = _read_numbers(folder, "cycles.csv", ["time", "cycles", "scheduler_us", "max_cycle_us"])
    t = timeline["time"].to_numpy() / 3600

    fig, ax = plt.subplots(figsize=(11, 4))
    drawn = 0
    for col in timeline.columns:
        if col.startswith("used_") and "offered_" + col[5:] in timeline.columns:
            used = timeline[col].to_numpy()
            offered = timeline["offered_" + col[5:]].to_numpy()
            ax.step(t, np.divide(used, offered, out=np.zeros_like(used), where=offered > 0), where="post",
                    label=col[5:], linewidth=1)
            drawn += 1
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("simulated time (hours)")
    ax.set_ylabel("in use / offered")
    u = metrics.get("utilisation")
    ax.set_title("Utilisation" + (f" (over the run: {u:.3f} of {metrics.get('utilisation_of', 'slots')})"
                                  if isinstance(u, (int, float)) else ""))
    if drawn:
        ax.legend(loc="lower right", fontsize=8)
    ax.grid(alpha=0.3)
    figs.save(fig, "fig_utilisation.png", "Utilisation over time",
              "Per consumable: what running jobs hold over what the taskers that are up offer, at the last "
              "cycle of each simulated minute.")

    fig, ax = plt.subplots(figsize=(11, 4))
    ax.step(t, timeline["queued"].to_numpy(), where="post", label="queued", color="#c55a11")
    ax.step(t, timeline["running"].to_numpy(), where="post", label="running", color="#4472c4")
    ax.set_xlabel("simulated time (hours)")
    ax.set_ylabel("jobs")
    ax.set_title("Queue length and running jobs")
    ax.legend()
    ax.grid(alpha=0.3)
    figs.save(fig, "fig_queue.png", "Queue length over time",
              "Jobs waiting (submitted, not started: held and throttled ones included) and jobs running.")

    fig, ax = plt.subplots(figsize=(8, 4))
    if len(waits):
        ax.step(*cdf_steps(waits), where="post")
        ax.set_xscale("symlog", linthresh=1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("wait (seconds, from submit to start)")
    ax.set_ylabel("fraction of started jobs (at most x)")
    w = metrics.get("wait_seconds", {})
    ax.set_title(f"Wait-time CDF ({len(waits):,} started jobs"
                 + (f"; mean {w['mean']:,.0f} s, median {w['median']:,.0f} s"
                    if all(isinstance(w.get(k), (int, float)) for k in ("mean", "median")) else "") + ")")
    ax.grid(alpha=0.3)
    figs.save(fig, "fig_waits.png", "Wait-time CDF", "The fraction of started jobs that waited at most x seconds.")

    if len(rows["start"]):
        lo, hi = float(rows["start"].min()), float(rows["end"].max())
        edges = np.linspace(lo, hi if hi > lo else lo + 1, 201)
    else:
        edges = np.linspace(0, 1, 2)
    _shares_figure(figs, rows, "queue", "fig_shares_queue.png", "Slot shares per queue over time", edges)
    _shares_figure(figs, rows, "user", "fig_shares_user.png", "Slot shares per user over time", edges)

    ct = cycles["time"].to_numpy() / 3600
    n = cycles["cycles"].to_numpy()
    us = cycles["scheduler_us"].to_numpy()
    mx = cycles["max_cycle_us"].to_numpy()
    fig, ax = plt.subplots(figsize=(11, 4))
    ax.plot(ct, np.divide(us, n, out=np.zeros_like(us), where=n > 0), ".", markersize=2,
            label="mean per cycle in the minute")
    ax.plot(ct, mx, ".", markersize=2, alpha=0.5, label="slowest cycle in the minute")
    ax.set_yscale("log")
    ax.set_xlabel("simulated time (hours)")
    ax.set_ylabel("scheduler time per cycle (us)")
    ax.set_title(f"Scheduler time per cycle ({int(n.sum()):,} cycles; wall clock, differs run to run)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, which="both")
    figs.save(fig, "fig_cycles.png", "Scheduler time per cycle",
              "Wall-clock time of the scheduling cycles, per simulated minute (cycles.csv).")

    _reasons_figure(figs, counts, "simulation")
    return summary, metrics


def _table(d):
    rows = []
    for k, v in d.items():
        if isinstance(v, dict):
            if len(v) > 6:  # per-user tables are long: the figures show them
                continue
            v = ", ".join(f"{a}: {b}" for a, b in v.items())
        rows.append(f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>")
    return "<table>\n" + "\n".join(rows) + "\n</table>"


def write_report(folder):
    """Writes report.html and its figures into `folder`; returns the figure names. Raises ReportError."""
    import matplotlib

    matplotlib.use("Agg")
    if not os.path.isdir(folder):
        raise ReportError(f"{folder}: not a folder")
    _clear_stale(folder)
    figs = Figures(folder)
    page_tmp = None
    try:
        extra = ""
        if os.path.exists(os.path.join(folder, "sweep.csv")):
            from report_sweep import sweep_report

            kind = "sweep"
            summary, metrics, extra = sweep_report(folder, figs)
        elif os.path.exists(os.path.join(folder, "schedule.csv")):
            kind = "simulate"
            summary, metrics = simulate_report(folder, figs)
        elif os.path.exists(os.path.join(folder, "results.csv")):
            kind = "match"
            summary, metrics = match_report(folder, figs)
        else:
            raise ReportError(f"{folder}: no results.csv, schedule.csv or sweep.csv (run colmatch match, simulate or "
                              "sweep first)")
        parts = [f"<h1>colmatch {kind}: {html.escape(str(summary.get('farm', '')))}</h1>",
                 f"<p>From the files in <code>{html.escape(os.path.abspath(folder))}</code>.</p>",
                 "<h2>Summary</h2>", _table(summary)]
        if metrics:
            parts += ["<h2>Metrics</h2>", _table(metrics)]
        for name, title, caption in figs.items:
            parts.append(f'<figure><h2>{html.escape(title)}</h2><img src="{name}" alt="{html.escape(title)}">'
                         f"<figcaption>{html.escape(caption)}</figcaption></figure>")
        if extra:
            parts.append(extra)
        page = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                f"<title>colmatch {kind} report</title><style>body{{font-family:sans-serif;max-width:70em;"
                "margin:auto}} table{border-collapse:collapse} th,td{border:1px solid #ccc;padding:2px 8px;"
                "text-align:left} img{max-width:100%} figcaption{color:#555}</style></head><body>\n"
                + "\n".join(parts) + "\n</body></html>\n")
        page_tmp, f = _create(folder, "html")
        with f:
            f.write(page.encode("utf-8"))
        figs.publish()
        os.replace(page_tmp, os.path.join(folder, "report.html"))
    except BaseException:
        figs.discard()
        if page_tmp and os.path.lexists(page_tmp):
            os.unlink(page_tmp)
        raise
    return [name for name, _, _ in figs.items]


def main(argv):
    if len(argv) != 2 or argv[1].startswith("-"):
        print("usage: colmatch report OUT_DIR   (a folder written by colmatch match, simulate or sweep)",
              file=sys.stderr)
        return 1
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwinds: the temporary files are removed
    folder = os.path.abspath(argv[1]).rstrip("/")
    try:
        if not os.path.isdir(folder):
            raise ReportError(f"{argv[1]}: not a folder")
        # the lock a colmatch run (or sweep) holds while it writes the folder: a run that replaces the folder
        # meanwhile would take the figures with it
        from sweep import FolderBusy, folder_lock  # beside this file; its top imports only the standard library

        try:
            with folder_lock(folder):
                names = write_report(argv[1])
        except FolderBusy as e:
            raise ReportError(f"{e.lock}: a colmatch run is writing {argv[1]}; try again when it is done") from None
    except OSError as e:
        print(f"colmatch: error: {e}", file=sys.stderr)
        return 1
    except ReportError as e:
        print(f"colmatch: error: {e}", file=sys.stderr)
        return 1
    except ImportError as e:
        print(f"colmatch: error: {e} (install python3-matplotlib, python3-numpy and python3-pandas: tools/setup.sh)",
              file=sys.stderr)
        return 1
    print(f"wrote {os.path.join(argv[1], 'report.html')} with {len(names)} figures")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
