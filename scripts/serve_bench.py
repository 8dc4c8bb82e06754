#!/usr/bin/env python3
"""Time to first token and generation speed through a running <name>-server,
seen by the client: streamed /v1/completions at temperature 0, each run with
a prompt of its own (the run number first), so that the server's KV cache
holds nothing of it but the BOS token. Prints the medians, and the server's
own `timings` for comparison.

  scripts/serve_bench.py --port 8080 [--prompt TEXT] [-n 128] [-r 5]
"""
import argparse
import http.client
import json
import statistics
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
    final = None
    for raw in resp:
        line = raw.decode().strip()
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        event = json.loads(line[6:])
        if event["choices"][0].get("text"):
            last = time.perf_counter()
            first = first or last
        if event.get("usage"):
            final = event
    conn.close()
    generated = final["usage"]["completion_tokens"]
    return {
        "ttft_ms": 1000 * (first - start),
        # Tokens after the first, over the time after it (as the CLI's generation rate).
        "tokens_per_s": (generated - 1) / (last - first) if last > first else 0.0,
        "server_prompt_ms": final["timings"]["prompt_ms"],
        "server_tokens_per_s": final["timings"]["predicted_per_second"],
        "generated": generated,
    }


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--port", type=int, default=8080)
    p.add_argument("--prompt", default="Once upon a time, there was a little girl who")
    p.add_argument("-n", type=int, default=128)
    p.add_argument("-r", type=int, default=5)
    a = p.parse_args()
    run(a.port, "warm-up " + a.prompt, a.n)
    runs = [run(a.port, f"{i} {a.prompt}", a.n) for i in range(a.r)]
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    print(f"client: time to first token {med['ttft_ms']:.2f} ms, generation {med['tokens_per_s']:.1f} tokens/s "
          f"({med['generated']:.0f} tokens, median of {a.r})")
    print(f"server timings: prompt {med['server_prompt_ms']:.2f} ms, generation {med['server_tokens_per_s']:.1f} tokens/s")


if __name__ == "__main__":
    main()
