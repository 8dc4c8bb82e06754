#!/usr/bin/env python3
"""Time to first token and generation speed through a running <name>-server,
seen by the client: streamed /v1/completions at temperature 0, each run with
a prompt of its own (the run number first), so that the server's KV cache
holds nothing of it but the BOS token. Prints the medians, and the server's
own `timings` for comparison.

With --concurrency 1,2,4,8: for each count C, C clients at once, each
sending -r requests one after another; prints per C the aggregate generated
tokens per second (all tokens over the wall time from the first request to
the last answer) and the time to first token's p50 and p99 over all C * r
requests. Works against llama-server too (it counts streamed chunks where a
server sends no usage; a request that a server ends with an error event
counts the tokens that came, and the table says how many were so ended).

With --system-prompt WORDS: what a long prefix that requests share (a system
prompt of that many words) costs in time to first token. Each of -r rounds
sends, one after another, a question of its own (i) alone, (ii) after a
system prompt that starts differently each time (computed in full), and
(iii) after the same system prompt every time (sent once before the
rounds); prints each kind's median TTFT and prompt tokens, and (iii)
against (i). Since the kinds alternate, (iii) finds its prefix in the
server's prefix cache rather than in the slot it just used.

  scripts/serve_bench.py --port 8080 [--prompt TEXT] [-n 128] [-r 5] [--concurrency 1,2,4,8 | --system-prompt 750]
"""
import argparse
import http.client
import json
import statistics
import threading
import time


def run(port, prompt, n):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    body = json.dumps({"prompt": prompt, "max_tokens": n, "temperature": 0, "stream": True})
    start = time.perf_counter()
    conn.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
    resp = conn.getresponse()
    if resp.status != 200:
        raise SystemExit(f"serve_bench: HTTP {resp.status}: {resp.read().decode()}")
    first = last = None
    final = {}
    chunks = 0
    error = False
    for raw in resp:
        line = raw.decode().strip()
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        event = json.loads(line[6:])
        if "error" in event:  # the server gave up on the request mid-stream: count what came
            error = True
            break
        if event["choices"] and event["choices"][0].get("text"):
            chunks += 1
            last = time.perf_counter()
            first = first or last
        if event.get("usage"):
            final = event
    conn.close()
    generated = final["usage"]["completion_tokens"] if final else chunks
    timings = final.get("timings", {})
    return {
        "prompt_tokens": final["usage"]["prompt_tokens"] if final else float("nan"),
        "ttft_ms": 1000 * (first - start),
        # Tokens after the first, over the time after it (as the CLI's generation rate).
        "tokens_per_s": (generated - 1) / (last - first) if last > first else 0.0,
        "server_prompt_ms": timings.get("prompt_ms", float("nan")),
        "server_tokens_per_s": timings.get("predicted_per_second", float("nan")),
        "generated": generated,
        "error": error,
    }


def percentile(values, q):
    """The q-th percentile (0..100), interpolated between the nearest ranks."""
    v = sorted(values)
    at = (len(v) - 1) * q / 100
    low = int(at)
    high = min(low + 1, len(v) - 1)
    return v[low] + (v[high] - v[low]) * (at - low)


def concurrent(port, prompt, n, clients, requests):
    """`clients` threads at once, each sending `requests` requests in turn."""
    results = []
    lock = threading.Lock()

    def client(c):
        for i in range(requests):
            r = run(port, f"{clients}.{c}.{i} {prompt}", n)
            with lock:
                results.append(r)

    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    ttft = [r["ttft_ms"] for r in results]
    return {
        "aggregate_tokens_per_s": sum(r["generated"] for r in results) / wall,
        "ttft_p50_ms": percentile(ttft, 50),
        "ttft_p99_ms": percentile(ttft, 99),
        "stream_tokens_per_s": statistics.median(r["tokens_per_s"] for r in results),
        "generated": sum(r["generated"] for r in results),
        "errors": sum(r["error"] for r in results),
    }


# Words for a system prompt of any length that reads like text (a fixed
# sequence, so that every run and every server sees the same one).
WORDS = ("you are a helpful assistant who answers questions about the weather in short and friendly sentences "
         "always check the facts first and say so when you do not know something give the temperature in degrees "
         "and mention rain wind and snow where they matter keep every answer under three lines").split()


def system_prompt(words):
    return " ".join(WORDS[(7 * i) % len(WORDS)] for i in range(words)) + "\n"


def repeated_prefix(port, question, n, words, rounds):
    """TTFT of a question alone, after a new system prompt, and after the same one."""
    shared = system_prompt(words)
    run(port, shared + "warm-up " + question, n)
    kinds = {"alone": [], "new system prompt": [], "repeated system prompt": []}
    for i in range(rounds):
        q = f"Question {i}: {question}"
        kinds["alone"].append(run(port, q, n))
        kinds["new system prompt"].append(run(port, f"Round {i}. " + shared + q, n))
        kinds["repeated system prompt"].append(run(port, shared + q, n))
    print("| requests | prompt tokens | TTFT (median) | server prompt ms (median) |")
    print("|---|---:|---:|---:|")
    med = {}
    for kind, runs in kinds.items():
        med[kind] = statistics.median(r["ttft_ms"] for r in runs)
        tokens = statistics.median(r["prompt_tokens"] for r in runs)
        prompt_ms = statistics.median(r["server_prompt_ms"] for r in runs)
        print(f"| {kind} | {tokens:.0f} | {med[kind]:.1f} ms | {prompt_ms:.1f} |")
    extra = 100 * (med["repeated system prompt"] / med["alone"] - 1)
    print(f"the repeated system prompt adds {extra:+.1f} % to the time to first token ({rounds} rounds)")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--port", type=int, default=8080)
    p.add_argument("--prompt", default="Once upon a time, there was a little girl who")
    p.add_argument("-n", type=int, default=128)
    p.add_argument("-r", type=int, default=5)
    p.add_argument("--concurrency", help="comma-separated client counts, e.g. 1,2,4,8")
    p.add_argument("--system-prompt", type=int, metavar="WORDS", help="measure a repeated system prompt of WORDS words")
    a = p.parse_args()
    run(a.port, "warm-up " + a.prompt, a.n)
    if a.system_prompt:
        return repeated_prefix(a.port, a.prompt, a.n, a.system_prompt, a.r)
    if a.concurrency:
        print("| streams | aggregate tokens/s | TTFT p50 | TTFT p99 | per stream tokens/s (median) | tokens | ended by an error |")
        print("|---:|---:|---:|---:|---:|---:|---:|")
        for clients in (int(c) for c in a.concurrency.split(",")):
            m = concurrent(a.port, a.prompt, a.n, clients, a.r)
            print(f"| {clients} | {m['aggregate_tokens_per_s']:.1f} | {m['ttft_p50_ms']:.0f} ms | "
                  f"{m['ttft_p99_ms']:.0f} ms | {m['stream_tokens_per_s']:.1f} | {m['generated']} | {m['errors']} |",
                  flush=True)
        return
    runs = [run(a.port, f"{i} {a.prompt}", a.n) for i in range(a.r)]
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    print(f"client: time to first token {med['ttft_ms']:.2f} ms, generation {med['tokens_per_s']:.1f} tokens/s "
          f"({med['generated']:.0f} tokens, median of {a.r})")
    print(f"server timings: prompt {med['server_prompt_ms']:.2f} ms, generation {med['server_tokens_per_s']:.1f} tokens/s")


if __name__ == "__main__":
    main()
