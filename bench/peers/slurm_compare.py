"""How close a colmatch replay comes to Slurm's own timeline (issue 48).

usage: slurm_compare.py SACCT_TXT SCHEDULE_CSV [TOLERANCE_S]

SACCT_TXT: `sacct -a -P` output (or bench/peers/slurm_run.sh's sacct.txt) of the jobs Slurm ran;
SCHEDULE_CSV: `colmatch simulate --format slurm --accounting SACCT_TXT`'s schedule.csv (a row per job, or per
allocation: the first row of a job counts). Prints, for the jobs both have: how many start within TOLERANCE_S
(default 5) of Slurm's real start, the mean wait of each (start - submit), and the largest differences.
Slurm's times are whole seconds and its starts come 0-2 s after the event that frees room
(../shared/references/slurm-run.md), so a few seconds is agreement.
"""
import csv
import datetime
import sys


def iso(t):
    return datetime.datetime.fromisoformat(t).replace(tzinfo=datetime.timezone.utc).timestamp()


def main():
    sacct, schedule = sys.argv[1], sys.argv[2]
    tol = float(sys.argv[3]) if len(sys.argv) > 3 else 5.0
    real = {}
    with open(sacct, encoding="utf-8") as f:
        header = f.readline().rstrip("\n").split("|")
        col = {h: i for i, h in enumerate(header)}
        idf = "JobIDRaw" if "JobIDRaw" in col else "JobID"
        for line in f:
            p = line.rstrip("\n").split("|")
            if len(p) != len(header) or "." in p[col[idf]]:
                continue
            if p[col["Start"]] in ("", "Unknown", "None"):
                continue
            real[p[col[idf]]] = (iso(p[col["Submit"]]), iso(p[col["Start"]]))
    ours = {}
    with open(schedule, encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["job"] in ours or row["start"] in ("", "nan"):
                continue
            ours[row["job"]] = float(row["start"])
    both = sorted(set(real) & set(ours), key=lambda j: real[j][1])
    if not both:
        sys.exit("no job in both")
    diffs = [(ours[j] - real[j][1], j) for j in both]
    close = sum(abs(d) <= tol for d, _ in diffs)
    wait_real = sum(real[j][1] - real[j][0] for j in both) / len(both)
    wait_ours = sum(ours[j] - real[j][0] for j in both) / len(both)
    print(f"jobs: {len(both)} (Slurm ran {len(real)}, colmatch started {len(ours)})")
    print(f"start within {tol:g} s of Slurm's: {close} ({100.0 * close / len(both):.1f}%)")
    print(f"mean wait: Slurm {wait_real:.1f} s, colmatch {wait_ours:.1f} s ({100.0 * (wait_ours / wait_real - 1) if wait_real else 0:+.1f}%)")
    worst = sorted(diffs, key=lambda x: -abs(x[0]))[:8]
    print("largest differences (colmatch - Slurm, s): " + ", ".join(f"job {j}: {d:+.0f}" for d, j in worst))


if __name__ == "__main__":
    main()
