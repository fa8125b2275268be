"""Slurm's jobcomp/filetxt records as `sacct -a -P` prints them (bench/peers/slurm_run.sh).

usage: slurm_jobcomp.py JOBCOMP_TXT WORKLOAD_TXT > sacct.txt

jobcomp/filetxt writes one `Key=Value ...` line a finished job (SubmitTime, EligibleTime, StartTime, EndTime,
TimeLimit in minutes, NodeCnt, ProcCnt, Tres, Partition, UserId, JobState); it has no constraint, which the workload's
options give (and only the workload's jobs are kept) (WORKLOAD_TXT: `ID<TAB>OFFSET<TAB>RUNTIME<TAB>options`, as slurm_run.sh writes it). The fields
are those loaders/slurm_sacct.hpp reads: JobIDRaw, Submit, Eligible, Start, End, Timelimit, NNodes, NCPUS, ReqMem,
Constraints, ReqTRES, Partition, User, Account, QOS, State (ReqMem and ReqTRES from the record's Tres: what
the job held, which for these jobs is what it asked).
"""
import re
import shlex
import sys

FIELDS = ["JobIDRaw", "Submit", "Eligible", "Start", "End", "Timelimit", "NNodes", "NCPUS", "ReqMem", "Constraints",
          "ReqTRES", "Partition", "User", "Account", "QOS", "State"]


def records(path):
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        if not line:
            continue
        rec = {}
        for m in re.finditer(r"(\w+)=(\S*)", line):
            rec[m.group(1)] = m.group(2)
        yield rec


def constraints(path):
    out = {}
    for line in open(path, encoding="utf-8"):
        parts = line.rstrip("\n").split("\t")
        if len(parts) < 4:
            continue
        words = shlex.split(parts[3])
        c = ""
        for i, w in enumerate(words):
            if w in ("-C", "--constraint") and i + 1 < len(words):
                c = words[i + 1]
            elif w.startswith("--constraint="):
                c = w.split("=", 1)[1]
        out[parts[0]] = c
    return out


def minutes(limit):
    if limit in ("", "UNLIMITED", "Partition_Limit"):
        return limit
    m = int(limit)
    return f"{m // 60:02d}:{m % 60:02d}:00"


def main():
    comp, workload = sys.argv[1], sys.argv[2]
    cons = constraints(workload)
    print("|".join(FIELDS))
    for r in sorted(records(comp), key=lambda r: int(r["JobId"])):
        if r["JobId"] not in cons:  # not this workload's (an earlier run on the same controller)
            continue
        tres = r.get("Tres", "")
        mem = next((t.split("=", 1)[1] for t in tres.split(",") if t.startswith("mem=")), "")
        row = {
            "JobIDRaw": r["JobId"],
            "Submit": r.get("SubmitTime", ""),
            "Eligible": r.get("EligibleTime", ""),
            "Start": r.get("StartTime", ""),
            "End": r.get("EndTime", ""),
            "Timelimit": minutes(r.get("TimeLimit", "")),
            "NNodes": r.get("NodeCnt", ""),
            "NCPUS": r.get("ProcCnt", ""),
            "ReqMem": mem,
            "Constraints": cons.get(r["JobId"], ""),
            "ReqTRES": tres,
            "Partition": r.get("Partition", ""),
            "User": r.get("UserId", "").split("(")[0],
            "Account": r.get("Account", ""),
            "QOS": r.get("QOS", ""),
            "State": r.get("JobState", ""),
        }
        print("|".join(row[f] for f in FIELDS))


if __name__ == "__main__":
    main()
