"""Where the cores go: run a command, read the CPU time of every thread of its process tree from /proc every
0.25 s until it ends, and print the wall time, the CPU seconds seen (and so the cores kept busy) by process
kind (the kreassign driver, the JVM, Spark's Python workers) and, in the JVM, by thread kind (Spark's task
threads, the C1 and C2 compilers, the garbage collector and VM thread, the rest). Linux only. A thread's
last quarter second before it ends is not seen.

    .venv/bin/python bench/thread_cpu.py .venv/bin/kreassign --generate --strategy balanced --engine spark \
        --spark-master 'local[2]' --cluster-snapshot-file S --topics-to-move-json-file T --broker-list "$(seq -s, 1 1000)"
"""

import os
import re
import subprocess
import sys
import time
from collections import Counter

from bench_generate import process_tree  # this directory is on sys.path when run as a script

TICK = os.sysconf("SC_CLK_TCK")


def kind_of_process(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as h:
            cmd = h.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "?"
    if "java" in cmd.split(" ")[0]:
        return "jvm"
    if "pyspark.daemon" in cmd or "pyspark/daemon" in cmd or ("worker" in cmd and "python" in cmd):
        return "python-worker"
    if "kreassign" in cmd:
        return "driver"
    return cmd.split(" ")[0].rsplit("/", 1)[-1]


def thread_kind(name):
    for pattern, kind in (
        (r"C2 Compiler", "C2"),
        (r"C1 Compiler", "C1"),
        (r"GC Thread|ParGC|G1|VM Thread|GC ", "GC/VM"),
        (r"Executor task", "tasks"),
    ):
        if re.search(pattern, name):
            return kind
    return "other"


def main():
    cmd = sys.argv[1:]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    seen = {}  # (pid, tid) -> (process kind, thread kind, CPU ticks so far, thread name)
    while proc.poll() is None:
        for pid in process_tree(proc.pid):
            pkind = kind_of_process(pid)
            try:
                tids = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for tid in tids:
                try:
                    with open(f"/proc/{pid}/task/{tid}/stat") as h:
                        text = h.read()
                except OSError:
                    continue
                name = text[text.index("(") + 1 : text.rindex(")")]
                fields = text.rsplit(")", 1)[1].split()
                ticks = int(fields[11]) + int(fields[12])
                seen[(pid, tid)] = (pkind, thread_kind(name) if pkind == "jvm" else pkind, ticks, name)
        time.sleep(0.25)
    wall = time.perf_counter() - start
    by = Counter()
    names = Counter()
    for pkind, tkind, ticks, name in seen.values():
        by[(pkind, tkind)] += ticks / TICK
        if tkind == "other":
            names[re.sub(r"[0-9]+", "N", name)] += ticks / TICK
    total = sum(by.values())
    print(f"wall {wall:.1f} s, cpu seen {total:.1f} s ({total / wall:.2f} cores), rc {proc.returncode}")
    for (pkind, tkind), sec in sorted(by.items(), key=lambda kv: -kv[1]):
        print(f"  {pkind:14s} {tkind:8s} {sec:7.1f} s")
    for name, sec in names.most_common(8):
        print(f"      other: {name:20s} {sec:6.1f} s")


if __name__ == "__main__":
    main()
