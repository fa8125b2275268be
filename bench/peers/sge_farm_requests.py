#!/usr/bin/python3
"""Requests for the Grid Engine farms of bench/peers/sge_farms.sh (issue 25): targeted ones (each kind of
value, override and queue list the farm has) and seeded random combinations, one job a line as qsub
options. `sge_farms.sh ask` gives them to the real qselect / qsub -w v.

    /usr/bin/python3 bench/peers/sge_farm_requests.py farm80 [N_RANDOM] > requests.txt
    /usr/bin/python3 bench/peers/sge_farm_requests.py jobs farm80 N > jobs.txt   # for sge_farms.sh submit
    /usr/bin/python3 bench/peers/sge_farm_requests.py release farm80 SEED N > jobs.txt   # sge_priority.sh
"""
import random
import sys

TARGETED = {
    "farm80": """
-l arch_s=x86_64
-l arch_s=aarch64
-l arch_s=x86*
-l arch_s=!x86_64
-l osc=redhat
-l osc=UBUNTU
-l osc=red*
-l os=rhel*
-l os=rhel8|ubuntu22
-l os=!rhel9
-l cores=32
-l cores=64
-l cores=65
-l scratch=200G
-l scratch=300G
-l scratch=301G
-l mem_c=64G
-l mem_c=100G
-l mem_c=129G
-l gpu=1
-l gpu=2
-l gpu=3
-l gpu=5
-l lic=1
-l lic=10
-l lic=11
-l tmo=3600
-l tmo=1:0:0
-l tmo=7200
-l tmo=7201
-l fast=true
-l fast=false
-l fast=1
-l speed=1.5
-l speed=1.9
-l speed=2
-l rack=rack1
-l rack=rack[12]
-l rack=!rack4
-l h_rt=0:30:0
-l h_rt=1:00:00
-l h_rt=1:00:01
-l h_rt=100:0:0
-l s_rt=0:50:0
-l s_rt=0:51:0
-l h_vmem=8G
-l h_vmem=12G
-l h_vmem=16G
-l h_vmem=17G
-l hostname=h0001
-l h=h00[0-1]*
-l h=H0080
-l qname=short.q
-l qname=*.q
-l qname=gpu*
-l q=even.q
-l calendar=NONE
-l slots=2
-l slots=16
-l slots=17
-l bogus=1
-l cores=abc
-l arch_s=(x86
-q all.q
-q short.q
-q all.q@@rack1
-q all.q@h0001
-q *@@even
-q gpu.q@h0080
-q all.q@h0001,short.q@h0002
-q all.q@@gpu
-q *@@gpuextra
-q inter.q
-q short.q@h0003
-q nosuch.q
-pe smp 1
-pe smp 2
-pe smp 4
-pe mpi 4
-pe mpi 2
-l gpu=1 -pe smp 2
-l arch_s=aarch64 -q all.q
-l os=rhel8,cores=32
-l rack=rack2,tmo=3600
-l rack=rack2,tmo=3601
-l h_rt=0:30:0 -q short.q@@rack2
-l mem_c=100G,fast=true
-l arch_s=aarch64,gpu=4
-l arch_s=aarch64,gpu=2,os=rhel*
-soft -l cores=64
-l arch_s=x86_64 -soft -l fast=true
-l speed=1.1,os=ubuntu22,osc=ubuntu
""",
    "farm1000": """
-l arch_s=aarch64
-l os=sles15
-l os=rhel*|sles*
-l cores=128
-l cores=129
-l mem_c=200G
-l mem_c=288G
-l mem_c=289G
-l gpu=4
-l gpu=5
-l h_rt=0:30:00
-l h_rt=0:30:01
-l h_rt=72:00:00
-l h_rt=72:00:01
-l h_vmem=512G
-l h_vmem=600G
-l h_vmem=1T
-l h_vmem=2T
-l rack=rack1
-l rack=rack2?
-l speed=2
-l speed=2.5
-l slots=32
-l slots=33
-q all.q@@r1
-q long.q@@east
-q *@@gpu
-q mem.q@n0121
-q all.q@n0500
-q short.q@n0001
-pe mpi 8
-pe smp 16
-l h_rt=48:00:00 -pe mpi 4
-l gpu=8
-l gpu=8 -q gpu.q@n1000
""",
}

VALUES = {
    "farm80": {
        "arch_s": ["x86_64", "aarch64", "x86*", "*64", "!x86_64", "x86_64|aarch64"],
        "osc": ["redhat", "UBUNTU", "red*", "!redhat"],
        "os": ["rhel8", "rhel9", "ubuntu22", "rhel*", "rhel8|ubuntu22", "!rhel9", "ubuntu2?"],
        "cores": ["4", "8", "16", "32", "64", "65", "128"],
        "scratch": ["50G", "100G", "200G", "300G", "301G", "1T"],
        "mem_c": ["1G", "32G", "64G", "100G", "128G", "129G"],
        "gpu": ["1", "2", "3", "4", "5"],
        "lic": ["1", "5", "10", "11"],
        "tmo": ["1800", "1:0:0", "3600", "7200", "3:0:0"],
        "fast": ["true", "false", "TRUE", "0", "1"],
        "speed": ["1.0", "1.3", "1.5", "1.9", "2"],
        "rack": ["rack1", "rack2", "rack3", "rack4", "rack[12]", "!rack4", "rack*"],
        "h_rt": ["0:30:0", "1:00:00", "1:00:01", "10:0:0"],
        "s_rt": ["0:40:0", "0:50:0", "0:51:0"],
        "h_vmem": ["4G", "8G", "12G", "16G", "17G"],
        "hostname": ["h0001", "h00[0-1]*", "h007?", "!h0001", "h0061|h0080"],
        "qname": ["all.q", "short.q", "gpu.q", "*.q", "even.q", "!all.q"],
        "calendar": ["NONE"],
    },
    "farm1000": {
        "arch_s": ["x86_64", "aarch64", "!aarch64"],
        "os": ["rhel8", "rhel9", "ubuntu22", "sles15", "rhel*", "!sles15"],
        "cores": ["16", "32", "64", "128", "129"],
        "scratch": ["50G", "150G", "250G", "251G"],
        "mem_c": ["96G", "192G", "288G", "289G"],
        "gpu": ["1", "4", "5", "8"],
        "speed": ["0.5", "1.5", "2.5", "3"],
        "rack": ["rack1", "rack12", "rack2?", "!rack1"],
        "h_rt": ["0:10:0", "0:30:0", "1:0:0", "72:0:0", "73:0:0"],
        "h_vmem": ["100G", "512G", "700G", "1T"],
        "hostname": ["n0001", "n05*", "n1000", "n099?"],
        "qname": ["all.q", "long.q", "short.q", "gpu.q", "mem.q", "*.q"],
    },
}

QUEUES = {
    "farm80": ["all.q", "short.q", "gpu.q", "even.q", "all.q@@rack1", "*@@rack2", "all.q@h0001", "*@@even",
               "short.q@@rack1", "gpu.q@h0080", "*@@gpu", "all.q@h00[1-3]*"],
    "farm1000": ["all.q", "long.q", "short.q", "gpu.q", "mem.q", "all.q@@r1", "*@@west", "*@@east", "*@@gpu",
                 "mem.q@@r4", "long.q@n00*"],
}


def random_requests(farm, n, seed):
    rng = random.Random(seed)
    values = VALUES[farm]
    names = sorted(values)
    out = []
    for _ in range(n):
        k = rng.choice([1, 1, 2, 2, 3, 4])
        picked = rng.sample(names, k)
        line = "-l " + ",".join(f"{a}={rng.choice(values[a])}" for a in picked)
        if rng.random() < 0.2:
            line += " -q " + ",".join(rng.sample(QUEUES[farm], rng.choice([1, 1, 2])))
        if rng.random() < 0.1:
            line += f" -pe {rng.choice(['smp', 'mpi'])} {rng.choice([1, 2, 4])}"
        out.append(line)
    return out


def value_request(rng, farm, counts):
    """`-l` with a few of the farm's values (how many: one of `counts`), or None for none."""
    values = VALUES[farm]
    names = [a for a in sorted(values) if a not in ("hostname", "qname")]
    picked = rng.sample(names, rng.choice(counts))
    return "-l " + ",".join(f"{a}={rng.choice(values[a])}" for a in picked) if picked else None


def jobs(farm, n, seed):
    """Jobs to run on the farm (sge_farms.sh submit): RUNTIME, a tab, qsub options. `-w e` keeps out a
    job no queue instance could take (it would wait for ever); a few are arrays, parallel, held or
    prioritised."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        request = value_request(rng, farm, [0, 1, 1, 2])
        opts = ["-w e"] + ([request] if request else [])
        r = rng.random()
        if r < 0.08:
            opts.append(f"-t 1-{rng.choice([2, 3])}")
        elif r < 0.18:
            opts.append(f"-pe {rng.choice(['smp', 'mpi'])} {rng.choice([2, 4])}")
        elif r < 0.22:
            opts.append("-h")
        if rng.random() < 0.2:
            opts.append(f"-p {rng.choice([-100, -10, 0])}")
        if rng.random() < 0.1:
            opts.append("-q " + rng.choice(QUEUES[farm]))
        out.append(f"{rng.randint(5, 40)}\t{' '.join(opts)}")
    return out


def release(farm, n, seed):
    """Jobs released into one scheduling run (FARM_AS_IS=1 sge_priority.sh run): six users' (`@gu1`;
    bench/peers/sge_tickets_shares.txt makes them), sequential and parallel of up to 32 slots, requests of
    the farm's values, some -q lists, POSIX priorities and job shares, a few held; enough of them to fill
    the farm so that the order decides who starts."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        opts = ["@" + rng.choice(["gu1", "gu1", "gu2", "gu3", "gu4", "gu5"])]
        request = value_request(rng, farm, [0, 0, 1, 1, 2])
        if request:
            opts.append(request)
        r = rng.random()
        if r < 0.35:
            opts.append(f"-pe {rng.choice(['smp', 'mpi', 'mpi'])} {rng.choice([2, 4, 8, 16, 32])}")
        elif r < 0.38:
            opts.append("-h")
        if rng.random() < 0.2:
            opts.append(f"-p {rng.choice([-100, -10, 0])}")
        if rng.random() < 0.1:
            opts.append(f"-js {rng.choice([10, 50])}")
        if rng.random() < 0.1:
            opts.append("-q " + rng.choice(QUEUES[farm]))
        out.append(" ".join(opts))
        if rng.random() < 0.05:
            out.append("sleep 1")
    return out


def main():
    if sys.argv[1] == "release":
        print("\n".join(release(sys.argv[2], int(sys.argv[4]), seed=int(sys.argv[3]))))
        return
    if sys.argv[1] == "jobs":
        print("\n".join(jobs(sys.argv[2], int(sys.argv[3]), seed=2025)))
        return
    farm = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 240
    lines = [l for l in TARGETED[farm].strip().splitlines() if l.strip()]
    lines += random_requests(farm, n, seed=25)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
