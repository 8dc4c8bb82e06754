#!/usr/bin/env python3
"""A <name>-server under hostile load on loopback (issue 23), measured from
the client:

  - /health latency (p50, p99, max) while 200 completions wait at -np 1;
  - /health latency while 100 connections trickle their heads a byte a second;
  - the server's resident memory while 20 clients send 100 MB chunked bodies;
  - requests per second of short completions at -np 4 (8 clients, 8 tokens,
    greedy, a prompt of its own each), -r rounds, for each program given, in
    turn (say: the server before a change and after it).

  scripts/hostile_bench.py SERVER_PROGRAM [SERVER_PROGRAM ...] [-r 3] [--requests 400] [--only rps|attack]

The attack measures need a server with --max-waiting (after issue 23); the
requests-per-second measure runs any. Standard library only.
"""
import argparse
import http.client
import json
import os
import re
import select
import socket
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor


class Server:
    def __init__(self, program, args):
        self.proc = subprocess.Popen([program, "--port", "0", "-t", "1", *args], stderr=subprocess.PIPE, text=True)
        m = None
        for line in self.proc.stderr:  # its first lines may be notes on the model
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
            if m:
                break
        if not m:
            self.proc.kill()
            sys.exit(f"hostile_bench: {program} did not start")
        self.port = int(m.group(1))
        threading.Thread(target=lambda: [None for _ in self.proc.stderr], daemon=True).start()  # drain its log

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.proc.terminate()
        self.proc.wait()

    def resident_mib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return 0.0


def post(port, body, timeout=600):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("POST", "/v1/completions", json.dumps(body), {"Content-Type": "application/json"})
        resp = conn.getresponse()
        resp.read()
        return resp.status
    except OSError:
        return 0
    finally:
        conn.close()


def health_ms(port):
    start = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("GET", "/health")
    resp = conn.getresponse()
    resp.read()
    conn.close()
    if resp.status != 200:
        sys.exit(f"hostile_bench: /health answered {resp.status}")
    return 1000 * (time.perf_counter() - start)


def sample_health(port, stop, every=0.05):
    times = []
    while not stop.is_set():
        times.append(health_ms(port))
        time.sleep(every)
    return times


def summary(times):
    times = sorted(times)
    p = lambda q: times[min(len(times) - 1, int(q * len(times)))]  # noqa: E731
    return f"p50 {p(0.5):.2f} ms, p99 {p(0.99):.2f} ms, max {times[-1]:.2f} ms over {len(times)} requests"


def health_while_queued(program):
    with Server(program, ["-np", "1", "--max-waiting", "256"]) as s:
        stop = threading.Event()
        sampler = ThreadPoolExecutor(1).submit(sample_health, s.port, stop)
        body = {"prompt": "Once upon a time", "max_tokens": 64, "temperature": 0}
        with ThreadPoolExecutor(200) as pool:
            statuses = list(pool.map(lambda i: post(s.port, {**body, "seed": i}), range(200)))
        stop.set()
        times = sampler.result()
    bad = sum(1 for x in statuses if x != 200)
    print(f"/health during 200 queued completions (-np 1, 64 tokens each): {summary(times)}"
          + (f"; {bad} completions failed" if bad else ""))


def health_while_slow_heads(program, seconds=20):
    with Server(program, []) as s:
        conns = [socket.create_connection(("127.0.0.1", s.port)) for _ in range(100)]
        head = b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n" + b"X-Padding: " + b"a" * 100
        stop = threading.Event()
        sampler = ThreadPoolExecutor(1).submit(sample_health, s.port, stop)
        for i in range(seconds):
            for c in conns:
                try:
                    c.send(head[i:i + 1])
                except OSError:
                    pass
            time.sleep(1)
        stop.set()
        times = sampler.result()
        for c in conns:
            c.close()
    print(f"/health during 100 connections sending a head byte a second for {seconds} s: {summary(times)}")


def memory_while_chunked(program, clients=20, megabytes=100):
    with Server(program, ["-np", "4", "--max-waiting", "32"]) as s:
        before = s.resident_mib()
        peak = [before]
        stop = threading.Event()

        def watch():
            while not stop.is_set():
                peak[0] = max(peak[0], s.resident_mib())
                time.sleep(0.02)

        chunk = b"10000\r\n" + b"x" * 0x10000 + b"\r\n"

        def client(_):
            c = socket.create_connection(("127.0.0.1", s.port))
            c.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
            try:
                for _ in range(megabytes * 16):  # until all is sent or the server has answered
                    if select.select([c], [], [], 0)[0]:
                        break
                    c.sendall(chunk)
            except OSError:
                pass
            c.settimeout(10)
            try:
                answer = c.recv(200).split(b" ")[1].decode()
            except (OSError, IndexError):
                answer = "none"
            c.close()
            return answer

        watcher = threading.Thread(target=watch)
        watcher.start()
        with ThreadPoolExecutor(clients) as pool:
            answers = list(pool.map(client, range(clients)))
        stop.set()
        watcher.join()
    print(f"resident memory while {clients} clients send {megabytes} MB chunked bodies: {before:.0f} MiB before, "
          f"{peak[0]:.0f} MiB at most; answers: {', '.join(sorted(set(answers)))}")


def requests_per_second(program, requests, clients=8, tokens=8, label="r"):
    with Server(program, ["-np", "4"]) as s:
        def client(k):
            for i in range(k, requests, clients):
                status = post(s.port, {"prompt": f"{label} {i}: Once upon a time", "max_tokens": tokens,
                                       "temperature": 0})
                if status != 200:
                    raise RuntimeError(f"hostile_bench: HTTP {status}")

        start = time.perf_counter()
        with ThreadPoolExecutor(clients) as pool:
            list(pool.map(client, range(clients)))
        return requests / (time.perf_counter() - start)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("servers", nargs="+")
    p.add_argument("-r", "--rounds", type=int, default=3)
    p.add_argument("--requests", type=int, default=400)
    p.add_argument("--only", choices=["rps", "attack"])
    a = p.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    if a.only != "attack":
        rates = {program: [] for program in a.servers}
        for r in range(a.rounds):
            for program in a.servers:
                rates[program].append(requests_per_second(program, a.requests, label=f"{r}"))
        for program, values in rates.items():
            print(f"{program}: {statistics.median(values):.1f} requests/s median of {a.rounds} "
                  f"({', '.join(f'{v:.1f}' for v in values)}), -np 4 -t 1, 8 clients, {a.requests} completions of 8 tokens")
    if a.only != "rps":
        program = a.servers[-1]
        health_while_queued(program)
        health_while_slow_heads(program)
        memory_while_chunked(program)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
