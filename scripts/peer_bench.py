#!/usr/bin/env python3
"""kiln beside llama.cpp and ik_llama.cpp on the same GGUF files: prompt (ppN)
and generation (tgN) tokens/s, interleaved per model and thread count, as a
markdown table for docs/benchmarks.md.

  scripts/peer_bench.py --llama ../peers/llama.cpp/build/bin/llama-bench \\
      --ik ../peers/ik_llama.cpp/build/bin/llama-bench -p 512 -n 128 -r 3 -t 1,2 \\
      build-bench/bin/bench-tinyllama-1.1b-q4_0-bench=build-bench/models/bench-tinyllama-1.1b-q4_0.gguf

Each MODEL is `<kiln bench program>=<its GGUF file>`. ik_llama.cpp runs twice,
plain and with run-time repacking (`-rtr 1`); its flash attention is on by
default. With --depth D, generation is measured after D cached positions:
kiln's and llama.cpp's `-d D`, ik_llama.cpp's `-gp D,N` (it has no -d); no
prompt test is run then, and llama.cpp runs twice, with flash attention off
and on (`-fa 0`, `-fa 1`), as the faster of the two depends on the CPU.
The ratios are against each peer's best configuration.
"""
import argparse
import json
import statistics
import subprocess
import sys


def run_json(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out[out.index("["):])


def kiln(program, a, threads):
    cmd = [program, "-r", str(a.r), "-t", str(threads), "-o", "json", "-n", str(a.n)]
    cmd += ["-p", "0", "-d", str(a.depth)] if a.depth else ["-p", str(a.p)]
    rows = run_json(cmd)
    return {("pp" if r["test"].startswith("pp") else "tg"): (r["tokens_per_s"], r["stddev"]) for r in rows}


def llama_bench(binary, gguf, a, threads, tests):
    cmd = [binary, "-m", gguf, "-r", str(a.r), "-t", str(threads), "-o", "json"] + tests
    out = {}
    for r in run_json(cmd):
        kind = "tg" if r["n_gen"] > 0 else "pp"
        out[kind] = (r["avg_ts"], r["stddev_ts"])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="+", metavar="MODEL")
    ap.add_argument("--llama", required=True, help="llama.cpp's llama-bench")
    ap.add_argument("--ik", help="ik_llama.cpp's llama-bench (left out if not given)")
    ap.add_argument("-p", type=int, default=512)
    ap.add_argument("-n", type=int, default=128)
    ap.add_argument("-r", type=int, default=3)
    ap.add_argument("-t", default="1,2")
    ap.add_argument("--depth", type=int, default=0)
    a = ap.parse_args()

    llama_variants = [["-fa", "0"], ["-fa", "1"]] if a.depth else [[]]
    columns = ["kiln"] + (["llama.cpp -fa 0", "llama.cpp -fa 1"] if a.depth else ["llama.cpp"]) + \
              (["ik_llama.cpp", "ik -rtr 1"] if a.ik else [])
    test_names = ([f"tg{a.n} @ d{a.depth}"] if a.depth else [f"pp{a.p}", f"tg{a.n}"])
    print("| model | test | threads | " + " | ".join(columns) + " | kiln ÷ llama.cpp's best |" +
          (" kiln ÷ ik's best |" if a.ik else ""))
    print("|---|---|---:|" + "---:|" * len(columns) + "---:|" + ("---:|" if a.ik else ""))
    if a.depth:
        llama_tests = ["-p", "0", "-n", str(a.n), "-d", str(a.depth)]
        ik_tests = ["-p", "0", "-n", "0", "-gp", f"{a.depth},{a.n}"]
    else:
        llama_tests = ik_tests = ["-p", str(a.p), "-n", str(a.n)]
    for model in a.models:
        program, gguf = model.split("=", 1)
        name = program.rsplit("/", 1)[-1].removesuffix("-bench")
        for threads in [int(t) for t in a.t.split(",")]:
            results = [kiln(program, a, threads)]
            results += [llama_bench(a.llama, gguf, a, threads, llama_tests + extra) for extra in llama_variants]
            if a.ik:
                for extra in ([], ["-rtr", "1"]):
                    results.append(llama_bench(a.ik, gguf, a, threads, ik_tests + extra))
            for test in test_names:
                kind = test[:2]
                cells = [f"{r[kind][0]:.1f} ± {r[kind][1]:.1f}" if kind in r else "-" for r in results]
                ours = results[0].get(kind, (0, 0))[0]
                ratio = lambda x: f"{ours / x:.2f}" if x else "-"
                best = lambda rs: max(r.get(kind, (0, 0))[0] for r in rs)
                n_llama = len(llama_variants)
                row = f"| {name} | {test} | {threads} | " + " | ".join(cells) + \
                      f" | {ratio(best(results[1:1 + n_llama]))} |"
                if a.ik:
                    row += f" {ratio(best(results[1 + n_llama:]))} |"
                print(row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
