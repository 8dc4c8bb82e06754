#!/usr/bin/env python3
"""Writes the expected token ids of every test vocabulary (tests/support/vocab_variants.hpp)
with llama.cpp's llama-tokenize, one file per vocabulary in this folder:
<name>.llama.cpp-<commit>.ids. See README.md for the format and the command line.

Each text is tokenized twice as llama-tokenize offers it: "plain" (no BOS, special
tokens read as text, as test-tokenizer-0 does) and "special" (BOS as the vocabulary
says, special tokens parsed), and once more in plain mode printing each token's piece,
to tell whether llama.cpp's pieces put together give the text back ("roundtrip")."""

import argparse
import hashlib
import json
import pathlib
import re
import subprocess
import tempfile

SEPARATOR = b"\n__ggml_vocab_test__\n"
HERE = pathlib.Path(__file__).resolve().parent


def read_texts(path):
    data = path.read_bytes()
    assert data.endswith(SEPARATOR), path
    return data.split(SEPARATOR)[:-1]


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tokenize(args, vocab, text_file, *flags):
    command = [args.llama_tokenize, "-m", str(vocab), "-f", str(text_file), "--no-escape", "--log-disable", *flags]
    return subprocess.run(command, check=True, capture_output=True).stdout


def token_ids(args, vocab, text_file, *flags):
    return json.loads(tokenize(args, vocab, text_file, "--ids", *flags))


def pieces_give_back(args, vocab, text_file, ids, text):
    """Whether llama-tokenize's pieces ("%6d -> '<piece>'\\n" for each token) put
    together are the text; the ids are known, so each piece ends where the next
    token's line starts."""
    out = tokenize(args, vocab, text_file, "--no-bos", "--no-parse-special")
    joined, at = b"", 0
    for k, token in enumerate(ids):
        start = f"{token:6d} -> '".encode()
        assert out.startswith(start, at), (out, at)
        at += len(start)
        end = out.index(b"'\n" + f"{ids[k + 1]:6d} -> '".encode(), at) if k + 1 < len(ids) else len(out) - 2
        assert out[end:end + 2] == b"'\n", out
        joined += out[at:end]
        at = end + 2
    assert at == len(out), out
    return joined == text


def end_of_generation_ids(args, vocab, text_file):
    log = subprocess.run([args.llama_tokenize, "-m", str(vocab), "-f", str(text_file), "--ids", "-lv", "4"],
                         check=True, capture_output=True, text=True, errors="replace")
    return sorted({int(m) for m in re.findall(r"print_info: EOG token\s+=\s+(\d+)", log.stdout + log.stderr)})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--writer", required=True, help="the build's tests/write_vocab_variant")
    parser.add_argument("--llama-tokenize", required=True, help="llama.cpp's build/bin/llama-tokenize")
    parser.add_argument("--commit", required=True, help="the llama.cpp commit llama-tokenize was built from")
    parser.add_argument("--shared", required=True, help="the ../shared folder the build was configured with")
    args = parser.parse_args()

    version = subprocess.run([args.llama_tokenize, "--version"], capture_output=True, text=True)
    version_line = (version.stdout + version.stderr).splitlines()[0]
    assert args.commit[:8] in version_line, f"llama-tokenize says {version_line!r}, not commit {args.commit}"

    own_texts_path = HERE / "texts.inp"
    own_texts = read_texts(own_texts_path)
    listing = subprocess.run([args.writer, "--list"], check=True, capture_output=True, text=True).stdout
    with tempfile.TemporaryDirectory() as scratch:
        scratch = pathlib.Path(scratch)
        text_file = scratch / "text.txt"
        for line in listing.splitlines():
            name, base = line.split()
            base_path = pathlib.Path(args.shared) / "tokenizer-tests" / f"ggml-vocab-{base}.gguf"
            shared_texts_path = pathlib.Path(f"{base_path}.inp")
            vocab = scratch / f"{name}.gguf"
            subprocess.run([args.writer, name, str(vocab)], check=True)
            lines = [
                f"# test vocabulary {name}: token ids from llama.cpp's llama-tokenize, commit {args.commit}",
                f"# ({version_line}); written by tests/vocab_variants/make_expected.py, see README.md",
                f"# base sha256: {sha256(base_path)} (../shared/tokenizer-tests/{base_path.name})",
                f"# shared texts sha256: {sha256(shared_texts_path)} (../shared/tokenizer-tests/{shared_texts_path.name})",
                f"# own texts sha256: {sha256(own_texts_path)} (tests/vocab_variants/texts.inp)",
                f"# variant sha256: {sha256(vocab)} (write_vocab_variant {name})",
            ]
            text_file.write_bytes(b"")
            lines.append("eog: " + " ".join(map(str, end_of_generation_ids(args, vocab, text_file))))
            for set_name, texts in (("shared", read_texts(shared_texts_path)), ("own", own_texts)):
                for index, text in enumerate(texts):
                    text_file.write_bytes(text)
                    plain = token_ids(args, vocab, text_file, "--no-bos", "--no-parse-special")
                    round_trip = " roundtrip" if pieces_give_back(args, vocab, text_file, plain, text) else ""
                    lines.append(f"plain {set_name} {index}{round_trip}:" + "".join(f" {i}" for i in plain))
                    special = token_ids(args, vocab, text_file)
                    lines.append(f"special {set_name} {index}:" + "".join(f" {i}" for i in special))
            out = HERE / f"{name}.llama.cpp-{args.commit[:8]}.ids"
            out.write_text("\n".join(lines) + "\n")
            print(f"{out.name}: {len(lines)} lines")


if __name__ == "__main__":
    main()
