#!/usr/bin/python3
"""A FBSNG farm of many queues (issue 45, left from round 3: 10,000 queues x 100,000 jobs took > 5 s, the
queue priorities updated over every queue at each start). Writes farm.toml, taskers.jsonl, jobs.jsonl and
fbsng.toml into DIR (200 taskers of 8 slots; jobs of 1, 2 or 4 slots in QUEUES queues, every queue with the
"*" parameters; runtimes of 10 s to 10 min, or with RUNTIME=6000 up to 100 min, when the farm is full
and most queues have sections waiting), then: colmatch simulate --farm DIR/farm.toml --taskers DIR/taskers.jsonl
--jobs DIR/jobs.jsonl --policy DIR/fbsng.toml --out OUT.

Usage: bench/fbsng_many_queues.py DIR [QUEUES=10000] [JOBS=100000] [RUNTIME=600]"""
import json
import os
import random
import sys


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 1
    out, queues = argv[1], int(argv[2]) if len(argv) > 2 else 10000
    jobs = int(argv[3]) if len(argv) > 3 else 100000
    runtime = int(argv[4]) if len(argv) > 4 else 600
    os.makedirs(out, exist_ok=True)
    r = random.Random(7)
    with open(os.path.join(out, "farm.toml"), "w") as f:
        f.write('name = "fbsng-queues"\n[[attribute]]\nname = "slots"\ntype = "int"\nrelop = "<="\n'
                'consumable = true\n')
    with open(os.path.join(out, "taskers.jsonl"), "w") as f:
        for i in range(200):
            f.write(json.dumps({"name": f"t{i}", "attrs": {"slots": 8}}) + "\n")
    with open(os.path.join(out, "jobs.jsonl"), "w") as f:
        t = 0
        for j in range(jobs):
            t += r.randint(0, 2)
            f.write(json.dumps({"id": str(j), "queue": f"q{r.randrange(queues)}", "submit": t,
                                "slots": r.choice([1, 2, 4]), "runtime": r.randint(10, runtime), "walltime": 2 * runtime}) + "\n")
    with open(os.path.join(out, "fbsng.toml"), "w") as f:
        f.write('[policy]\nscheduler = "fbsng"\n[policy.fbsng.queues."*"]\nQPI = 1\nQPD = 2\nQPG = 100\nSPG = 50\n')
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
