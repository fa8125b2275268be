#!/usr/bin/env python3
"""Seeded random qsub lines for bench/peers/sge_priority.sh on the pe-hosts farm (bench/peers/sge_pe_hosts.sh):
sequential and parallel jobs of every allocation rule, fixed slots and ranges, requests of the farm's
complexes and POSIX priorities, with pauses between some submissions. Usage: sge_mixed_jobs.py SEED N [MOST]:
MOST, the most slots a parallel job asks (6; 3 lets more of them start in one run on the 24-slot farm)."""
import random
import sys

seed, n = int(sys.argv[1]), int(sys.argv[2])
most = int(sys.argv[3]) if len(sys.argv) > 3 else 6
rng = random.Random(seed)
requests = ["", "", "", "-l arch_s=x86_64", "-l arch_s=x86*", "-l cores=8", "-l cores=16", "-l lic=1",
            "-l tmo=1:00:00", "-l os=rhel8", "-q q2.q", "-q all.q@node0002", "-soft -l cores=32"]
for i in range(n):
    words = []
    kind = rng.random()
    if kind < 0.45:
        pass  # sequential
    else:
        pe = rng.choice(["smp", "mpi", "rr", "two"])
        if pe == "two":
            lo = 2 * rng.randint(1, max(1, most // 2))
            slots = f"{lo}-{lo + 2 * rng.randint(0, 2)}" if rng.random() < 0.3 else str(lo)
        else:
            lo = rng.randint(1, most)
            slots = f"{lo}-{lo + rng.randint(1, most)}" if rng.random() < 0.3 else str(lo)
        words += ["-pe", pe, slots]
    r = rng.choice(requests)
    if r:
        words.append(r)
    if rng.random() < 0.3:
        words += ["-p", str(rng.randint(-100, 100))]
    print(" ".join(words) if words else "-N seq")
    if rng.random() < 0.1:
        print("sleep 1")
