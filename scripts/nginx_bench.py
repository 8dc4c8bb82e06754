#!/usr/bin/env python3
"""Replicas behind deploy/nginx's configuration on loopback (deploy/nginx/
loopback.py), measured from the client:

  - requests per second of short completions (/v1/completions, -n tokens,
    greedy, a prompt of its own each), --clients at once, through nginx
    (no session header: least connections) and straight to the replicas
    (client k sends to replica k mod N); -r rounds of each, alternating;
  - how much of the prompts of turns 2 and 3 the replicas' caches held
    (usage.prompt_tokens_details.cached_tokens over prompt_tokens), and how
    many of those turns found their conversation's previous turn there, in
    --conversations concurrent 3-turn conversations through nginx, with
    X-Session-Id and without.

  scripts/nginx_bench.py SERVER_PROGRAM [--replicas 2] [-np 4] [--clients 8] [--requests 400] [-n 8] [-r 3]
                         [--conversations 40]
"""
import argparse
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "deploy", "nginx"))
from loopback import Conversation, Loopback, post  # noqa: E402


def requests_per_second(ports, clients, requests, tokens, label):
    """`requests` completions by `clients` threads, client k on ports[k % len]."""

    def client(k):
        for i in range(k, requests, clients):
            r = post(ports[k % len(ports)], "/v1/completions",
                     {"prompt": f"{label} {i}: Once upon a time", "max_tokens": tokens, "temperature": 0})
            if r.status != 200:
                sys.exit(f"nginx_bench: HTTP {r.status} {r.error or r.body}")

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=clients) as pool:
        list(pool.map(client, range(clients)))
    return requests / (time.perf_counter() - start)


def cache_hit_rate(port, count, session, label):
    """Cached over prompt tokens of turns 2 and 3; how many of those turns
    found the previous turn's prompt cached, of how many."""
    conversations = [Conversation(f"{label}-{i}", session) for i in range(count)]

    def talk(c):
        for n in (1, 2, 3):
            r = c.turn(port, n, 16)
            if r.status != 200:
                sys.exit(f"nginx_bench: HTTP {r.status} {r.error or r.body}")

    with ThreadPoolExecutor(max_workers=count) as pool:
        list(pool.map(talk, conversations))
    usage = [[r.body["usage"] for n, r in c.replies] for c in conversations]
    later = [u for turns in usage for u in turns[1:]]
    tokens = sum(u["prompt_tokens_details"]["cached_tokens"] for u in later) / sum(u["prompt_tokens"] for u in later)
    # A turn that found its conversation so far: at least the previous
    # turn's prompt was cached (others share only what every conversation's
    # first words have in common).
    whole = sum(1 for turns in usage for prev, u in zip(turns, turns[1:])
                if u["prompt_tokens_details"]["cached_tokens"] >= prev["prompt_tokens"])
    return tokens, whole, len(later)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("server")
    p.add_argument("--replicas", type=int, default=2)
    p.add_argument("-np", "--parallel", type=int, default=4)
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--requests", type=int, default=400)
    p.add_argument("-n", type=int, default=8, help="tokens per completion")
    p.add_argument("-r", "--rounds", type=int, default=3)
    p.add_argument("--conversations", type=int, default=40)
    a = p.parse_args()
    with Loopback(a.server, a.replicas, ["-np", str(a.parallel)], per_client=max(64, a.conversations)) as lb:
        direct_ports = [r.port for r in lb.replicas]
        rates = {"nginx": [], "direct": []}
        for round_ in range(a.rounds):
            for way, ports in (("nginx", [lb.nginx_port]), ("direct", direct_ports)):
                rates[way].append(requests_per_second(ports, a.clients, a.requests, a.n, f"{way}{round_}"))
        print(f"{a.replicas} replicas (-np {a.parallel} -t 1), {a.clients} clients, {a.requests} completions of "
              f"{a.n} tokens per round, {a.rounds} rounds")
        for way, values in rates.items():
            print(f"  {way:6}: {statistics.median(values):7.1f} requests/s median "
                  f"({', '.join(f'{v:.1f}' for v in values)})")
        print(f"{a.conversations} conversations of 3 turns through nginx, turns 2-3:")
        for session in (True, False):
            label = "with" if session else "without"
            tokens, whole, turns = cache_hit_rate(lb.nginx_port, a.conversations, session, label)
            print(f"  {label:7} X-Session-Id: {100 * tokens:.1f} % of prompt tokens cached; "
                  f"{whole} of {turns} turns found the previous turn's prompt cached")


if __name__ == "__main__":
    main()
