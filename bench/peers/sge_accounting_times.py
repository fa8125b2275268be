#!/usr/bin/python3
"""Puts the times back into an accounting file written under SIMULATE_EXECDS (issue 25).

Son of Grid Engine 8.1.9's qmaster, simulating execution hosts, ends a job after as many seconds as
its first argument says, but writes its accounting record with submission, start and end time and
ru_wallclock all 0 (sge_give_jobs.c swaps the usage list out of the job report before it writes the
record). The rest of each record (queue, host, owner, job and task number, slots, granted PE, the
category with the job's requests) is what the qmaster wrote. This fills, for each record whose job a
`qstat -j '*' -xml` taken while the jobs waited lists: submission_time (JB_submission_time) and
ru_wallclock (the job's first argument, what the simulated job ran); start and end stay 0, and the
replay then runs each job for its ru_wallclock. Records of jobs the listing missed are left as they are.

    /usr/bin/python3 bench/peers/sge_accounting_times.py ACCOUNTING QSTAT_J_XML[.gz] > accounting
"""
import gzip
import sys
import xml.etree.ElementTree as ET


def details(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        root = ET.parse(f).getroot()
    out = {}
    for job in root.iter("element"):
        num = job.find("JB_job_number")
        sub = job.find("JB_submission_time")
        if num is None or sub is None:
            continue
        args = [e.text for e in job.findall("JB_job_args/element/ST_name")]
        out[num.text] = (sub.text, args[0] if args else "3")
    return out


def main():
    known = details(sys.argv[2])
    filled = kept = 0
    with open(sys.argv[1]) as f:
        for line in f:
            if line.startswith("#"):
                sys.stdout.write(line)
                continue
            f_ = line.rstrip("\n").split(":")
            if f_[5] in known and f_[8] == "0":
                f_[8], f_[13] = known[f_[5]][0], known[f_[5]][1]
                filled += 1
            else:
                kept += 1
            sys.stdout.write(":".join(f_) + "\n")
    print(f"sge_accounting_times: {filled} records filled, {kept} kept as written", file=sys.stderr)


if __name__ == "__main__":
    main()
