#!/usr/bin/env python3
"""Seeded random qsub lines for bench/peers/sge_tickets.sh: jobs of several users (`@gu1 ...`), some
with a project (-P), a job share (-js) or override tickets (`ot N`), sequential or `-pe smp`/`-pe mpi`,
a first batch started before the rest are submitted (`start`), pauses between some submissions. Each asks
lic=0: the oracle farm's lic (1 on node0001 and node0003, whose 8 slots are the jobs' room) is requested by
default and would hold all but two jobs.
Usage: sge_tickets_jobs.py SEED N [FIRST]: FIRST jobs (2) are submitted and started before the others."""
import random
import sys

seed, n = int(sys.argv[1]), int(sys.argv[2])
first = int(sys.argv[3]) if len(sys.argv) > 3 else 2
rng = random.Random(seed)
users = ["gu1", "gu1", "gu2", "gu3", "gu4", "gu5"]
projects = ["", "", "p1", "p2", "p3"]
for i in range(n):
    if i == first:
        print("start")
    words = ["@" + rng.choice(users), "-l lic=0"]  # lic: the oracle farm's consumable requested by default
    if rng.random() < 0.25:
        words += ["-pe", rng.choice(["smp", "mpi"]), str(rng.randint(2, 4))]
    p = rng.choice(projects)
    if p:
        words += ["-P", p]
    if rng.random() < 0.2:
        words += ["-js", str(rng.choice([5, 10, 40]))]
    if rng.random() < 0.15:
        words += ["-p", str(-rng.randint(0, 100))]
    print(" ".join(words))
    if rng.random() < 0.1:
        print("ot", rng.choice([50, 300]))
    if rng.random() < 0.2:
        print("sleep 1")
