#!/usr/bin/env python3
"""Times a command from spawn to exit and reports its peak resident memory.

    scripts/spawn_time.py [-r RUNS] [--drop-caches] -- COMMAND [ARGS...]

Runs COMMAND RUNS times (default 5), its output discarded, after one
unmeasured run (warm page cache) or, with --drop-caches, with the page cache
dropped before each run (cold; needs root). Prints the median and fastest
wall time in ms and the median peak RSS in MB (ru_maxrss from wait4; a
spawned process starts from this script's own RSS, about 15 MB, so smaller
peaks read as that). Used to compare kiln's start-up with other programs'
(docs/benchmarks.md).
"""
import argparse
import os
import statistics
import sys
import time


def drop_caches():
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3")


def run_once(argv):
    devnull = os.open(os.devnull, os.O_WRONLY)
    actions = [(os.POSIX_SPAWN_DUP2, devnull, 1), (os.POSIX_SPAWN_DUP2, devnull, 2)]
    start = time.perf_counter()
    pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=actions)
    _, status, usage = os.wait4(pid, 0)
    elapsed = time.perf_counter() - start
    os.close(devnull)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"spawn_time.py: {' '.join(argv)} failed (exit {os.waitstatus_to_exitcode(status)})")
    return elapsed * 1e3, usage.ru_maxrss * 1024 / 1e6  # ru_maxrss is in KiB on Linux


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-r", "--runs", type=int, default=5)
    parser.add_argument("--drop-caches", action="store_true")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    argv = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not argv or args.runs < 1:
        parser.error("give a command after --, and at least one run")
    if not args.drop_caches:
        run_once(argv)
    times, peaks = [], []
    for _ in range(args.runs):
        if args.drop_caches:
            drop_caches()
        t, peak = run_once(argv)
        times.append(t)
        peaks.append(peak)
    print(f"spawn to exit {statistics.median(times):.1f} ms (fastest {min(times):.1f}), "
          f"peak RSS {statistics.median(peaks):.1f} MB, {args.runs} runs"
          f"{', page cache dropped before each' if args.drop_caches else ' after one unmeasured'}")


if __name__ == "__main__":
    main()
