"""colmatch report on a sweep folder (colmatch sweep --out DIR): one page comparing the points.

Figures: mean wait, p95 wait, mean bounded slowdown and utilisation per point; the wait-time CDFs of some
points overlaid (every point when there are at most six, else the three with the least and the three with
the most mean wait); a heat map of the mean wait per input when the grid has two axes of more than one
value. Then a table of every point (sweep.csv). Reads sweep.csv, sweep.json and runs/<point>/schedule.csv;
called by report.py, which owns the page, its temporary files and its errors.
"""
import html
import json
import os

from report_data import ReportError, _numbers, _read_csv, cdf_steps, started_waits

CDF_POINTS = 6
PANELS = [("wait_mean", "mean wait (s)"), ("wait_p95", "p95 wait (s)"),
          ("bounded_slowdown", "mean bounded slowdown"), ("utilisation", "utilisation")]


def _label(row, keys):
    parts = [row["input"]] + [f"{k}={row[k]}" for k in keys if row.get(k, "") != ""]
    text = " ".join(parts)
    return text if len(text) <= 50 else text[:47] + "..."


def _axes(folder):
    path = os.path.join(folder, "sweep.json")
    try:
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
    except FileNotFoundError:
        raise ReportError(f"{path}: missing (a sweep folder holds sweep.json beside sweep.csv)")
    except json.JSONDecodeError as e:
        raise ReportError(f"{path}: line {e.lineno}: {e.msg}")
    axes = spec.get("axes") if isinstance(spec, dict) else None
    if not isinstance(axes, list) or not all(isinstance(a, dict) and "key" in a and "values" in a for a in axes):
        raise ReportError(f"{path}: no list of axes (not written by colmatch sweep?)")
    return spec, axes


def _metric_bars(figs, ok, keys):
    import matplotlib.pyplot as plt

    labels = [_label(r, keys) for _, r in ok.iterrows()]
    fig, panels = plt.subplots(1, len(PANELS), figsize=(13, 0.32 * len(ok) + 1.8), sharey=True)
    for ax, (column, title) in zip(panels, PANELS):
        values = ok[column + "_n"].to_numpy()
        ax.barh(range(len(values)), values, color="#4472c4")
        ax.set_title(title, fontsize=9)
        ax.tick_params(axis="x", labelsize=7)
        ax.grid(alpha=0.3, axis="x")
    panels[0].set_yticks(range(len(labels)), labels, fontsize=7)
    panels[0].invert_yaxis()
    figs.save(fig, "fig_sweep_metrics.png", "Headline figures per point",
              "Per point that ran: the mean and 95th-percentile wait, the mean bounded slowdown (tau = 10 s) and "
              "the utilisation, from each run's metrics.json (sweep.csv).")


def _wait_cdfs(figs, folder, ok, keys):
    import matplotlib.pyplot as plt

    order = ok.sort_values("wait_mean_n", kind="stable")
    chosen = order if len(order) <= CDF_POINTS else \
        order.iloc[list(range(CDF_POINTS // 2)) + list(range(len(order) - CDF_POINTS // 2, len(order)))]
    fig, ax = plt.subplots(figsize=(10, 4.5))
    for _, row in chosen.iterrows():
        run = os.path.join(folder, "runs", row["point"])
        waits = started_waits(run)
        if len(waits):
            ax.step(*cdf_steps(waits), where="post",
                    label=_label(row, keys), linewidth=1.2)
    ax.set_xscale("symlog", linthresh=1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("wait (seconds, from submit to start)")
    ax.set_ylabel("fraction of started jobs (at most x)")
    ax.set_title(f"Wait-time CDFs ({len(chosen)} of {len(ok)} points)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    which = "every point" if len(chosen) == len(ok) else \
        f"the {CDF_POINTS // 2} points with the least and the {CDF_POINTS // 2} with the most mean wait"
    figs.save(fig, "fig_sweep_waits.png", "Wait-time CDFs", f"The wait-time CDF of {which}, from runs/<point>/"
              "schedule.csv.")


def _heat_maps(figs, ok, axes):
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.colors import LogNorm

    varied = [a for a in axes if len(a["values"]) > 1]
    if len(varied) != 2:
        return
    (kx, vx), (ky, vy) = [(a["key"], [_text(v) for v in a["values"]]) for a in varied]
    inputs = list(dict.fromkeys(ok["input"]))
    fig, panels = plt.subplots(1, len(inputs), figsize=(max(5.5, 1.1 * len(vx) + 3) * len(inputs), 0.6 * len(vy) + 2.5),
                               squeeze=False)
    for ax, name in zip(panels[0], inputs):
        grid = np.full((len(vy), len(vx)), np.nan)
        for _, row in ok[ok["input"] == name].iterrows():
            if row[kx] in vx and row[ky] in vy:
                grid[vy.index(row[ky]), vx.index(row[kx])] = row["wait_mean_n"]
        known = grid[~np.isnan(grid)]
        # waits that span orders of magnitude (strict order against backfill) on a log scale
        log = len(known) and known.min() > 0 and known.max() > 100 * known.min()
        image = ax.imshow(grid, cmap="viridis_r", aspect="auto",
                          norm=LogNorm(known.min(), known.max()) if log else None)
        ax.set_xticks(range(len(vx)), vx, fontsize=8)
        ax.set_yticks(range(len(vy)), vy, fontsize=8)
        ax.set_xlabel(kx)
        ax.set_ylabel(ky)
        ax.set_title(f"{name}: mean wait (s)", fontsize=10)
        for (i, j), v in np.ndenumerate(grid):
            if not np.isnan(v):  # dark text on the light (small) cells, light text on the dark ones
                ax.text(j, i, f"{v:,.0f}", ha="center", va="center", fontsize=7,
                        color="white" if image.norm(v) > 0.5 else "black")
        fig.colorbar(image, ax=ax, fraction=0.046)
    figs.save(fig, "fig_sweep_heatmap.png", f"Mean wait over {kx} x {ky}",
              "The mean wait of each point of the two-axis grid, one map per input (blank: the point failed; "
              "colours on a log scale when the waits span more than a factor of 100).")


def _text(v):
    """A grid value as sweep.csv writes it."""
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, (list, dict)):
        return json.dumps(v)
    return str(v)


def _points_table(frame):
    head = "".join(f"<th>{html.escape(c)}</th>" for c in frame.columns)
    rows = ["<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in row) + "</tr>"
            for row in frame.itertuples(index=False)]
    return "<table>\n<tr>" + head + "</tr>\n" + "\n".join(rows) + "\n</table>"


def sweep_report(folder, figs):
    """Draws the sweep's figures into `figs`; returns (summary, {}, the points table as HTML)."""
    spec, axes = _axes(folder)
    name = os.path.join(folder, "sweep.csv")
    table = _read_csv(folder, "sweep.csv", ["point", "input", "status", "error"])
    keys = [a["key"] for a in axes]
    missing = [k for k in keys if k not in table.columns]
    if missing:
        raise ReportError(f"{name}: line 1: no column {', '.join(missing)} (sweep.json names it as an axis)")
    ok = table[table["status"] == "ok"].copy()
    if spec.get("command", "simulate") == "simulate":
        for column, _ in PANELS:
            if column not in table.columns:
                raise ReportError(f"{name}: line 1: no column {column}")
            ok[column + "_n"] = _numbers(ok, column, name)
        if len(ok):
            _metric_bars(figs, ok, keys)
            if spec.get("write", "schedule") != "metrics":  # (write = "metrics": no schedule.csv to read)
                _wait_cdfs(figs, folder, ok, keys)
            _heat_maps(figs, ok, axes)
    summary = {"farm": spec.get("name", ""), "command": spec.get("command", ""), "points": len(table),
               "ok": int((table["status"] == "ok").sum()), "failed": int((table["status"] != "ok").sum()),
               "axes": ", ".join(f"{a['key']} ({len(a['values'])})" for a in axes) or "(explicit points)"}
    return summary, {}, "<h2>Points</h2>" + _points_table(table)
