"""sprio -l snapshots as bench/peers/slurm_run.sh records them, as a table (issue 48).

usage: slurm_sprio.py SPRIO_RAW > sprio.tsv

SPRIO_RAW: `## EPOCH` lines, each followed by what `sprio -l -h` printed then (JOBID PARTITION USER PRIORITY
SITE AGE ASSOC FAIRSHARE JOBSIZE PARTITION QOS NICE TRES). Prints `time job priority age fairshare jobsize`
(the weighted factors as sprio prints them: whole numbers), a line a job a snapshot.
"""
import sys


def main():
    print("time\tjob\tpriority\tage\tfairshare\tjobsize")
    t = None
    for line in open(sys.argv[1], encoding="utf-8"):
        if line.startswith("## "):
            t = line.split()[1]
            continue
        f = line.split()
        if t is not None and len(f) >= 9 and f[0].isdigit():
            print("\t".join([t, f[0], f[3], f[5], f[7], f[8]]))


if __name__ == "__main__":
    main()
