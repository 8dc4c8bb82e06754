#!/usr/bin/env python3
"""Compare two reference files written by refdump (or the shipped *.ref.txt).

usage: compare_refs.py A.txt B.txt

Prints the max |delta logit| over all LOGITS lines present in both, the
greedy ids that agree, and the largest differences in the GEN top-5 logits
and SEQ_MAXABS. Plain python3, no numpy. Exit status 0 unless the files
cannot be compared (different prompts / missing sections)."""
import sys


def read(path):
    r = {"logits": {}, "gen": [], "gen_ids": [], "prompt": None, "seq": None, "pos": {}}
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            parts = line.split()
            if not parts:
                continue
            tag = parts[0]
            if tag == "PROMPT":
                r["prompt"] = [int(x) for x in parts[3:]]
            elif tag == "LOGITS":
                r["logits"][int(parts[1])] = [float(x) for x in parts[2:]]
            elif tag == "POS":
                r["pos"][int(parts[1])] = int(parts[3].split("=")[1])
            elif tag == "GEN":
                top5 = [(int(t.split(":")[0]), float(t.split(":")[1])) for t in parts[parts.index("top5:") + 1:]]
                r["gen"].append((int(parts[3].split("=")[1]), float(parts[4].split("=")[1]), top5))
            elif tag == "GEN_IDS":
                r["gen_ids"] = [int(x) for x in parts[1:]]
            elif tag == "SEQ_MAXABS":
                r["seq"] = float(parts[1])
    return r


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    a, b = read(sys.argv[1]), read(sys.argv[2])
    if a["prompt"] != b["prompt"]:
        sys.exit("different prompts")
    common = sorted(set(a["logits"]) & set(b["logits"]))
    maxabs, where, ss, n = 0.0, None, 0.0, 0
    for p in common:
        la, lb = a["logits"][p], b["logits"][p]
        if len(la) != len(lb):
            sys.exit("position %d: %d vs %d logits" % (p, len(la), len(lb)))
        for v, (x, y) in enumerate(zip(la, lb)):
            d = abs(x - y)
            ss += d * d
            n += 1
            if d > maxabs:
                maxabs, where = d, (p, v)
    rms = (ss / n) ** 0.5 if n else 0.0
    argmax_same = sum(a["pos"][p] == b["pos"][p] for p in a["pos"] if p in b["pos"])
    ga, gb = a["gen_ids"], b["gen_ids"]
    same_prefix = 0
    while same_prefix < min(len(ga), len(gb)) and ga[same_prefix] == gb[same_prefix]:
        same_prefix += 1
    # GEN top-5 logits are comparable only while both sequences are identical.
    gen_top5 = 0.0
    for s in range(min(same_prefix + 1, len(a["gen"]), len(b["gen"]))):
        da = dict(a["gen"][s][2])
        for tok, val in b["gen"][s][2]:
            if tok in da:
                gen_top5 = max(gen_top5, abs(da[tok] - val))
    print("logits: %d positions compared, max |d| %.3g%s, rms %.3g; prompt argmax equal %d/%d" % (
        len(common), maxabs, " at pos %d id %d" % where if where else "", rms, argmax_same, len(a["pos"])))
    print("greedy ids: equal %d/%d, identical prefix %d; GEN top-5 max |d| (identical prefix) %.3g" % (
        sum(x == y for x, y in zip(ga, gb)), len(ga), same_prefix, gen_top5))
    print("SEQ_MAXABS: %s vs %s" % (a["seq"], b["seq"]))


if __name__ == "__main__":
    main()
