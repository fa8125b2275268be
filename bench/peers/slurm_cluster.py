#!/usr/bin/python3
"""slurm.conf node and partition lines of the oracle clusters (issue 26): invented nodes with varied
features, GPU types, CPUs, memory and weights, partitions over node sets. Printed to stdout; the oracle
script (bench/peers/slurm_oracle.sh) puts them after its fixed settings.

    /usr/bin/python3 bench/peers/slurm_cluster.py 100 > nodes.conf
"""
import os
import random
import sys

ARCH = [("intel", "skylake"), ("intel", "icelake"), ("amd", "rome"), ("amd", "milan")]
CPUS = [16, 32, 64, 128]
MEM = [64000, 128000, 256000, 512000]  # MiB
WEIGHT = [1, 10, 100]


def node(i, rng):
    vendor, gen = ARCH[i % 4]
    feats = [vendor, gen, "ib" if i % 3 else "eth"]
    if i % 5 == 0:
        feats.append("ssd")
    if MEM[(i // 4) % 4] >= 256000:
        feats.append("bigmem")
    gres = None
    if i % 10 == 0:
        gres = "gpu:a100:4"
        feats.append("gpu")
    elif i % 10 == 5:
        gres = "gpu:v100:2"
        feats.append("gpu")
    # FLAT=1: every node of weight 1, so runs of adjacent nodes are long (Slurm prefers the run holding a
    # job's required nodes)
    weight = 1 if os.environ.get("FLAT") == "1" else WEIGHT[i % 3]
    return dict(cpus=CPUS[(i // 2) % 4], mem=MEM[(i // 4) % 4], feats=",".join(feats), gres=gres,
                weight=weight)


def main():
    n = int(sys.argv[1])
    rng = random.Random(26)
    width = max(3, len(str(n)))
    groups = {}  # identical nodes share one line (every client command parses slurm.conf)
    for i in range(1, n + 1):
        key = tuple(sorted(node(i, rng).items(), key=lambda kv: kv[0]))
        groups.setdefault(key, []).append(f"n{i:0{width}d}")
    for key, names in groups.items():
        d = dict(key)
        gres = f" Gres={d['gres']}" if d["gres"] else ""
        print(f"NodeName={','.join(names)} CPUs={d['cpus']} RealMemory={d['mem']} Feature={d['feats']}"
              f"{gres} Weight={d['weight']} State=CLOUD")
    print("NodeSet=gpunodes Feature=gpu")
    print("NodeSet=amdnodes Feature=amd")
    # TIERS="short=3,gpu=2": those partitions' PriorityTier (the others keep Slurm's default, 1)
    tiers = dict(t.split("=") for t in os.environ.get("TIERS", "").split(",") if t)
    lines = {"all": "Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
             "gpu": "Nodes=gpunodes MaxTime=2-00:00:00 State=UP",
             "amd": "Nodes=amdnodes MaxTime=INFINITE State=UP",
             "short": f"Nodes=n[{1:0{width}d}-{n // 2:0{width}d}] MaxTime=01:00:00 State=UP",
             "big": "Nodes=ALL MaxNodes=4 MaxTime=INFINITE State=UP"}
    # JOBFACTORS="short=5,gpu=2": those partitions' PriorityJobFactor (priority/multifactor's partition factor)
    factors = dict(t.split("=") for t in os.environ.get("JOBFACTORS", "").split(",") if t)
    # BILLING="gpu:CPU=1.0,Mem=0.25G,GRES/gpu=2.0;amd:...": those partitions' TRESBillingWeights
    billing = dict(t.split(":", 1) for t in os.environ.get("BILLING", "").split(";") if t)
    # OVERSUB="short=EXCLUSIVE,gpu=FORCE:2": those partitions' OverSubscribe (Slurm's default NO)
    oversub = dict(t.split("=", 1) for t in os.environ.get("OVERSUB", "").split(",") if t)
    for name, rest in lines.items():
        tier = f" PriorityTier={tiers[name]}" if name in tiers else ""
        factor = f" PriorityJobFactor={factors[name]}" if name in factors else ""
        weights = f" TRESBillingWeights={billing[name]}" if name in billing else ""
        over = f" OverSubscribe={oversub[name]}" if name in oversub else ""
        print(f"PartitionName={name} {rest}{tier}{factor}{weights}{over}")


if __name__ == "__main__":
    main()
