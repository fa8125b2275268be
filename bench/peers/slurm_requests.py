#!/usr/bin/python3
"""Requests for the Slurm oracle clusters (issue 26): targeted ones (each construct of the constraint
language, GRES with and without a type, memory units, CPUs, partitions over node sets) and seeded random
combinations; one job a line as sbatch options with per-node options only (-C, -c, --mem, --gres, -p: a
task count would cap the -N1-<all> range the oracle asks with),
words without shell quoting. `slurm_oracle.sh ask` gives them to the real sbatch --test-only.

    /usr/bin/python3 bench/peers/slurm_requests.py [N_RANDOM] > requests.txt
"""
import random
import sys

TARGETED = """
-C amd
-C intel
-C AMD
-C nosuch
-C !amd
-C amd&ssd
-C amd,ssd
-C amd|gpu
-C amd|gpu&ssd
-C amd&gpu|ssd
-C gpu&intel|amd&ssd
-C amd|gpu|ssd&ib
-C (amd|gpu)&ssd
-C amd&(gpu|ssd)
-C ((amd|gpu)&ssd)
-C (amd)
-C ()
-C []
-C [amd|gpu]
-C [amd|gpu]&ssd
-C ssd&[amd|gpu]
-C [amd&gpu]
-C [amd|gpu]&[ssd|ib]
-C [amd|gpu]|ssd
-C [(amd|gpu)]
-C ([amd|gpu])
-C amd||gpu
-C amd&&gpu
-C amd&
-C |amd
-C milan|rome
-C skylake&bigmem
-C eth&ssd&gpu
-c 16
-c 64
-c 128
-c 129
--mem=64000
--mem=64001
--mem=500G
--mem=512000
--mem=512001
--mem=1T
--mem-per-cpu=4000 -c 16
--mem-per-cpu=4000 -c 128
--gres=gpu:1
--gres=gpu:2
--gres=gpu:3
--gres=gpu:4
--gres=gpu:5
--gres=gpu:a100:1
--gres=gpu:a100:4
--gres=gpu:a100:5
--gres=gpu:v100:2
--gres=gpu:v100:3
--gres=gpu:h100:1
--gres=nosuch:1
--gres=gpu:a100
-p gpu
-p amd
-p short
-p big
-p gpu,amd
-p nosuch
-p gpu -C amd
-p short -C bigmem
-p amd --gres=gpu:a100:1
-C amd --gres=gpu:v100:1
-C [intel|amd]&gpu --gres=gpu:2 --mem=100G
-c 32 --mem=250G -C bigmem
"""

FEATURES = ["intel", "amd", "skylake", "icelake", "rome", "milan", "ib", "eth", "ssd", "bigmem", "gpu"]


def constraint(rng):
    k = rng.choice([1, 1, 2, 2, 3])
    names = [rng.choice(FEATURES) for _ in range(k)]
    ops = [rng.choice("&|") for _ in range(k - 1)]
    text = names[0]
    for op, name in zip(ops, names[1:]):
        text += op + name
    r = rng.random()
    if k >= 2 and r < 0.2:
        text = f"[{names[0]}|{names[1]}]" + "".join(op + n for op, n in zip(ops[1:], names[2:]))
    elif k >= 2 and r < 0.4:
        text = f"({names[0]}{ops[0]}{names[1]})" + "".join(op + n for op, n in zip(ops[1:], names[2:]))
    return text


def random_requests(n, seed):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        opts = []
        if rng.random() < 0.8:
            opts.append("-C " + constraint(rng))
        if rng.random() < 0.4:
            opts.append(f"-c {rng.choice([1, 8, 16, 32, 64, 96, 128])}")
        if rng.random() < 0.5:
            opts.append(f"--mem={rng.choice(['1000', '32G', '64000', '100G', '250G', '300000', '500G'])}")
        if rng.random() < 0.2:
            opts.append(f"--gres=gpu:{rng.choice(['1', '2', '4', 'a100:1', 'a100:3', 'v100:1', 'v100:2'])}")
        if rng.random() < 0.25:
            opts.append(f"-p {rng.choice(['all', 'gpu', 'amd', 'short', 'big', 'gpu,amd', 'short,amd'])}")
        out.append(" ".join(opts) or "--mem=1000")
    return out


def batch_jobs(n, seed):
    """Jobs for `slurm_oracle.sh batch` (Slurm's main pass): one partition each (most in the smaller
    ones, so that a blocked partition leaves others running), CPUs and memory that pack nodes, some GPUs,
    matching ORs and --prefer."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        opts = []
        if rng.random() < 0.5:
            opts.append("-C " + constraint(rng))
        opts.append(f"-c {rng.choice([1, 2, 4, 8, 16, 32, 64])}")
        opts.append(f"--mem={rng.choice(['1000', '4G', '8G', '16G', '32G', '60G', '100G'])}")
        if rng.random() < 0.2:
            opts.append(f"--gres=gpu:{rng.choice(['1', '2', 'a100:1', 'a100:2', 'v100:1'])}")
        if rng.random() < 0.1:
            opts.append("--prefer " + rng.choice(FEATURES))
        opts.append("-p " + rng.choice(["all", "gpu", "gpu", "amd", "amd", "amd", "short", "short", "short"]))
        out.append(" ".join(opts))
    return out


def multi_node_jobs(n, seed):
    """Jobs of 1 to 6 nodes (-N K) for `slurm_oracle.sh batch`: the nodes Slurm picks for each."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        o = []
        if rng.random() < 0.4:
            o.append("-C " + rng.choice(FEATURES) + ("&" + rng.choice(FEATURES) if rng.random() < 0.3 else ""))
        o.append(f"-N {rng.choice([1, 2, 2, 3, 4, 6])}")
        o.append(f"-c {rng.choice([1, 4, 8, 16, 32])}")
        o.append(f"--mem={rng.choice(['1000', '8G', '16G', '32G'])}")
        if rng.random() < 0.15:
            o.append("--gres=gpu:1")
        o.append("-p " + rng.choice(["all", "gpu", "amd", "amd", "short", "short"]))
        out.append(" ".join(o))
    return out


def main():
    if len(sys.argv) > 1 and sys.argv[1] in ("--batch", "--multi"):
        make = batch_jobs if sys.argv[1] == "--batch" else multi_node_jobs
        print("\n".join(make(int(sys.argv[2]), int(sys.argv[3]))))
        return
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 240
    lines = [l for l in TARGETED.strip().splitlines() if l.strip()]
    print("\n".join(lines + random_requests(n, seed=26)))


if __name__ == "__main__":
    main()
