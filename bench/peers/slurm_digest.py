#!/usr/bin/python3
"""Shrinks the oracle's answers for a large cluster (issue 26): each line's host list becomes the number of
nodes and the 64-bit FNV-1a of their names sorted and joined by commas (colmatch's fnv1a, engine/
categories.hpp), so the answers for 10,000 nodes stay small and still check every node.

    /usr/bin/python3 bench/peers/slurm_digest.py < answers.tsv > digest.tsv
    (lines: request, count, hash in hex or "-", verdict)
"""
import re
import sys


def expand(hostlist):
    out = []
    for item in re.findall(r"[^,\[]+(?:\[[^\]]*\])?[^,\[]*", hostlist):
        m = re.fullmatch(r"([^\[]*)\[([^\]]*)\](.*)", item)
        if not m:
            out.append(item)
            continue
        prefix, ranges, suffix = m.groups()
        for r in ranges.split(","):
            lo, _, hi = r.partition("-")
            hi = hi or lo
            for v in range(int(lo), int(hi) + 1):
                out.append(f"{prefix}{v:0{len(lo)}d}{suffix}")
    return out


def fnv1a(data):
    h = 14695981039346656037
    for b in data:
        h ^= b
        h = (h * 1099511628211) % (1 << 64)
    return h


def main():
    for line in sys.stdin:
        request, nodes, verdict = line.rstrip("\n").split("\t")
        if nodes == "-":
            print(f"{request}\t0\t-\t{verdict}")
            continue
        names = sorted(expand(nodes))
        print(f"{request}\t{len(names)}\t{fnv1a(','.join(names).encode()):016x}\t{verdict}")


if __name__ == "__main__":
    main()
