#!/usr/bin/env python3
"""What a JSON schema costs per generated token: kiln's <name>-server against
llama-server on the same GGUF and the same chat request, with and without a
`response_format` json_schema (tests/grammar/ten_properties.schema.json:
integers and a number with bounds, strings with lengths, a pattern and a
date format, a boolean, an enum, an array, a nullable string; all
required), at temperature 0.

For each server and thread count, the server is started with one slot, sent
one request of each kind to warm up, then `--runs` requests of each kind in
turn. Generation speed is each server's own `timings.predicted_per_second`
(kiln reports llama-server's timings too); the table gives the medians, the
tokens generated, and the grammar's cost per token: the time per token with
the schema minus the time without, in ms and as a share of a token without.
The chat asks for thinking off (`chat_template_kwargs`), so that a template
with a reasoning block (Qwen3's) leaves the whole reply to the schema on both
servers. Prints the load average before and after each server's runs: the
machines these numbers come from are shared.

  scripts/grammar_bench.py --kiln build/bin/M-server --llama llama-server --model M.gguf [--threads 1,2] [--runs 3] [-n 128]
                           [--gbnf FILE]
"""
import argparse
import http.client
import json
import os
import statistics
import subprocess
import tempfile
import time

# The schema of tests/test_grammar_vocab.cpp's mask measurement.
SCHEMA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "grammar", "ten_properties.schema.json")


def request_body(with_schema, max_tokens, schema, gbnf):
    body = {
        "messages": [{"role": "user", "content": "Describe a user of our site as JSON."}],
        "temperature": 0,
        "max_tokens": max_tokens,
        "chat_template_kwargs": {"enable_thinking": False},
    }
    if with_schema and gbnf:
        body["grammar"] = gbnf
    elif with_schema:
        body["response_format"] = {"type": "json_schema", "json_schema": {"name": "user", "schema": schema}}
    return body


def post(port, body):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    conn.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    if resp.status != 200:
        raise SystemExit(f"grammar_bench: HTTP {resp.status}: {data.decode()[:500]}")
    return json.loads(data)


def wait_healthy(port, process, seconds=300):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"grammar_bench: the server exited with {process.returncode}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", "/health")
            if conn.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise SystemExit("grammar_bench: the server did not become healthy")


def load_average():
    return "%.2f %.2f %.2f" % os.getloadavg()


def measure(command, port, runs, max_tokens, schema, gbnf):
    """Medians of tokens/s and tokens generated, with and without the schema."""
    log = tempfile.TemporaryFile(mode="w+")
    with open(os.devnull, "w") as quiet:
        process = subprocess.Popen(command, stdout=quiet, stderr=log)
    try:
        wait_healthy(port, process)
        log.seek(0)
        for line in log:  # the servers' lines that say how many threads they use
            if "threads)" in line or "n_threads" in line:
                print("  " + line.strip()[:160], flush=True)
        for with_schema in (False, True):
            post(port, request_body(with_schema, max_tokens, schema, gbnf))
        speeds = {False: [], True: []}
        tokens = {False: [], True: []}
        sample = ""
        for _ in range(runs):
            for with_schema in (False, True):
                reply = post(port, request_body(with_schema, max_tokens, schema, gbnf))
                if with_schema:
                    sample = reply["choices"][0]["message"]["content"]
                    if reply["choices"][0]["finish_reason"] == "stop":
                        json.loads(sample)  # a finished reply must parse
                speeds[with_schema].append(reply["timings"]["predicted_per_second"])
                tokens[with_schema].append(reply["usage"]["completion_tokens"])
        result = {k: (statistics.median(speeds[k]), statistics.median(tokens[k]), speeds[k]) for k in speeds}
        result["sample"] = sample
        return result
    finally:
        process.terminate()
        process.wait()
        log.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kiln", required=True, help="kiln's <name>-server for the model")
    parser.add_argument("--llama", required=True, help="llama-server")
    parser.add_argument("--model", required=True, help="the GGUF both serve")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("-n", "--max-tokens", type=int, default=128)
    parser.add_argument("--port", type=int, default=18231)
    parser.add_argument("--gbnf", help="send this grammar (llama-server's `grammar` field) instead of the schema, so "
                        "that both servers enforce the same language (e.g. llama.cpp's "
                        "examples/json_schema_to_grammar.py of the schema file)")
    args = parser.parse_args()

    servers = {
        "kiln": lambda t: [args.kiln, "-m", args.model, "--port", str(args.port), "-t", str(t), "-np", "1"],
        "llama-server": lambda t: [args.llama, "-m", args.model, "--port", str(args.port), "-t", str(t), "-tb", str(t),
                                   "-np", "1", "-c", "4096", "--no-webui"],
    }
    with open(SCHEMA_FILE) as f:
        schema = json.load(f)
    gbnf = None
    if args.gbnf:
        with open(args.gbnf) as f:
            gbnf = f.read()
    rows = []
    for threads in (int(t) for t in args.threads.split(",")):
        for name, command in servers.items():
            before = load_average()
            result = measure(command(threads), args.port, args.runs, args.max_tokens, schema, gbnf)
            rows.append((name, threads, result, before, load_average()))
            print(f"{name}, {threads} thread(s): without {result[False][2]} tokens/s, with the schema {result[True][2]} "
                  f"(load before {before}, after {rows[-1][4]}); a reply with the schema: {result['sample'][:100]!r}",
                  flush=True)

    print()
    print("| server | threads | tokens/s without | with the schema | tokens (without / with) "
          "| grammar per token | share of a token | load average (1, 5, 15 min) before / after |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for name, threads, result, before, after in rows:
        plain, schema = result[False][0], result[True][0]
        cost_ms = 1000 / schema - 1000 / plain
        share = cost_ms / (1000 / plain)
        print(f"| {name} | {threads} | {plain:.1f} | {schema:.1f} | {result[False][1]:.0f} / {result[True][1]:.0f} "
              f"| {cost_ms:.2f} ms | {100 * share:.1f} % | {before} / {after} |")


if __name__ == "__main__":
    main()
