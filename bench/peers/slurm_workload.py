"""A seeded workload for bench/peers/slurm_run.sh: one job a line, `OFFSET RUNTIME sbatch-options`.

usage: slurm_workload.py SEED JOBS SPAN_S [CPUS_PER_NODE MEM_MB] > workload.txt

Jobs arrive at uniform random times over SPAN_S seconds; most ask one node (1, 2 or all of its CPUs, some
memory), a fifth ask 2 nodes (1 or 2 tasks each) and one in ten 4 nodes, so a queue forms and backfill has
holes to fill. Run times are 10 to 80 s; each job's -t is the whole minutes above its run time plus 15 s
(Slurm counts limits in minutes and ends a job over its limit up to 30 s late: slurm-run.md), so limits
overestimate run times as users' do. ACCOUNTS (environment, comma-separated) gives each job one of those
accounts at random (`-A NAME`), the first twice as often as each other (fair share has usage to weigh).
"""
import math
import os
import random
import sys


def main():
    seed, jobs, span = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    cpus = int(sys.argv[4]) if len(sys.argv) > 4 else 4
    mem = int(sys.argv[5]) if len(sys.argv) > 5 else 4000
    rng = random.Random(seed)
    accounts = [a for a in os.environ.get("ACCOUNTS", "").split(",") if a]
    if accounts:
        accounts = [accounts[0]] + accounts
    offsets = sorted(round(rng.uniform(0, span), 1) for _ in range(jobs))
    for off in offsets:
        runtime = rng.randint(10, 80)
        limit = max(1, math.ceil((runtime + 15) / 60))
        kind = rng.random()
        if kind < 0.7:
            c = rng.choice([1, 1, 2, cpus])
            m = rng.choice([500, 1000, 2000]) if c < cpus else mem // 2
            opts = f"-n 1 -c {c} --mem={m}"
        elif kind < 0.9:
            k = rng.choice([1, 2])
            opts = f"-N 2 --ntasks-per-node={k} -c 1 --mem=1000"
        else:
            opts = f"-N 4 --ntasks-per-node=1 -c 2 --mem=1000"
        if accounts:
            opts += f" -A {rng.choice(accounts)}"
        print(f"{off} {runtime} {opts} -t {limit}")


if __name__ == "__main__":
    main()
