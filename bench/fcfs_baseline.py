#!/usr/bin/python3
"""The plain baseline `colmatch simulate` is compared against (issue 24, BENCHMARKS.md): first come, first
served over one pool of MaxProcs processors, no per-node matching and no backfill, a heap of ends. It reads
a Standard Workload Format log as colmatch does (a job with no allocated processors or an unknown run time
is left out; a job runs min(run time, requested time) seconds) and writes one row per job: job, submit,
start, end, wait. What it leaves out against colmatch is the point: taskers, categories, reasons, a row per
tasker.

    /usr/bin/python3 bench/fcfs_baseline.py LOG.swf[.gz] OUT.csv
"""
import gzip
import heapq
import sys


def read_swf(path):
    opener = gzip.open if path.endswith(".gz") else open
    max_procs, jobs = 0, []
    with opener(path, "rt") as f:
        for line in f:
            if line.startswith(";"):
                if "MaxProcs:" in line:
                    max_procs = int(line.split("MaxProcs:")[1].split()[0])
                continue
            x = line.split()
            if len(x) < 9:
                continue
            submit, run, procs, req_time = float(x[1]), float(x[3]), int(x[4]), float(x[8])
            if procs <= 0 or run < 0:
                continue
            duration = min(run, req_time) if req_time >= 0 else run
            jobs.append((submit, x[0], procs, duration))
    jobs.sort(key=lambda j: j[0])  # stable: input order among equal submits
    return max_procs, jobs


def fcfs(max_procs, jobs):
    """Start times in submit order: the head of the queue starts when the pool has its processors."""
    free, ends, clock, starts = max_procs, [], 0.0, []
    for submit, _, procs, duration in jobs:
        clock = max(clock, submit)
        procs = min(procs, max_procs)
        while ends and ends[0][0] <= clock:  # capacity that came back by now
            free += heapq.heappop(ends)[1]
        while free < procs:  # wait for the next end
            end, p = heapq.heappop(ends)
            clock = max(clock, end)
            free += p
        free -= procs
        heapq.heappush(ends, (clock + duration, procs))
        starts.append(clock)
    return starts


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    max_procs, jobs = read_swf(sys.argv[1])
    starts = fcfs(max_procs, jobs)
    with open(sys.argv[2], "w") as out:
        out.write("job,submit,start,end,wait\n")
        for (submit, job, _, duration), start in zip(jobs, starts):
            out.write(f"{job},{submit:g},{start:g},{start + duration:g},{start - submit:g}\n")
    print(f"{len(jobs)} jobs on {max_procs} processors")


if __name__ == "__main__":
    main()
