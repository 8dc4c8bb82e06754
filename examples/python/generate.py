#!/usr/bin/env python3
"""Greedy text generation with a kiln model from Python, through the C API of
its shared library (capi/kiln.h) and ctypes, standard library only. Prints
what the model's command-line program prints for `-p PROMPT -n N --temp 0`.

    generate.py path/to/lib<name>.so [-m model.gguf] [-t threads] -p PROMPT [-n N]
"""
import argparse
import ctypes
import sys


class Sampling(ctypes.Structure):
    """kiln_sampling, field for field."""
    _fields_ = [("temperature", ctypes.c_float), ("top_k", ctypes.c_int32), ("top_p", ctypes.c_float),
                ("min_p", ctypes.c_float), ("repeat_penalty", ctypes.c_float), ("repeat_last_n", ctypes.c_int32),
                ("seed", ctypes.c_uint64)]


# kiln_token_callback. The piece is not NUL-terminated: a char pointer and a
# length (ctypes.string_at(piece, length) reads it).
TOKEN_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int32, ctypes.POINTER(ctypes.c_char),
                                  ctypes.c_size_t)


class KilnError(Exception):
    pass


class Kiln:
    """The functions of kiln.h this script uses, with their C types."""

    def __init__(self, library_path):
        lib = ctypes.CDLL(library_path)
        p, i32, i64, size = ctypes.c_void_p, ctypes.c_int32, ctypes.c_int64, ctypes.c_size_t
        i32_array = ctypes.POINTER(ctypes.c_int32)
        signatures = {
            "kiln_last_error": (ctypes.c_char_p, []),
            "kiln_sampling_default": (Sampling, []),
            "kiln_model_load": (p, [ctypes.c_char_p]),
            "kiln_model_free": (None, [p]),
            "kiln_session_new": (p, [p, ctypes.POINTER(Sampling), i32]),
            "kiln_session_free": (None, [p]),
            "kiln_tokenize": (i32, [p, ctypes.c_char_p, size, ctypes.c_int, ctypes.c_int, i32_array, i32]),
            "kiln_detokenize": (i64, [p, i32_array, i32, ctypes.c_char_p, size]),
            "kiln_generate": (i32, [p, i32_array, i32, i32, TOKEN_CALLBACK, p]),
        }
        for name, (restype, argtypes) in signatures.items():
            function = getattr(lib, name)
            function.restype, function.argtypes = restype, argtypes
        self.lib = lib

    def check(self, result, failed):
        if result == failed:
            raise KilnError(self.lib.kiln_last_error().decode("utf-8", "replace"))
        return result


def generate(kiln, model, session, prompt, n_predict):
    """The prompt's tokens and the greedy continuation, as one text (bytes)."""
    lib = kiln.lib
    text = prompt.encode("utf-8")
    n = kiln.check(lib.kiln_tokenize(model, text, len(text), 1, 1, None, 0), -1)
    ids = (ctypes.c_int32 * max(n, 1))()
    kiln.check(lib.kiln_tokenize(model, text, len(text), 1, 1, ids, n), -1)
    tokens = list(ids[:n])

    def on_token(_user_data, token, _piece, _piece_len):
        tokens.append(token)
        return 1

    kiln.check(lib.kiln_generate(session, ids, n, n_predict, TOKEN_CALLBACK(on_token), None), -1)
    all_ids = (ctypes.c_int32 * len(tokens))(*tokens)
    length = kiln.check(lib.kiln_detokenize(model, all_ids, len(tokens), None, 0), -1)
    out = ctypes.create_string_buffer(length + 1)
    kiln.check(lib.kiln_detokenize(model, all_ids, len(tokens), out, length + 1), -1)
    return out.raw[:length]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("library")
    parser.add_argument("-m", dest="gguf", default=None)
    parser.add_argument("-p", dest="prompt", required=True)
    parser.add_argument("-n", dest="n_predict", type=int, default=-1)
    parser.add_argument("-t", dest="threads", type=int, default=1)
    args = parser.parse_args()

    kiln = Kiln(args.library)
    lib = kiln.lib
    model = session = None
    try:
        model = kiln.check(lib.kiln_model_load(args.gguf.encode() if args.gguf else None), None)
        greedy = lib.kiln_sampling_default()
        greedy.temperature = 0
        session = kiln.check(lib.kiln_session_new(model, ctypes.byref(greedy), args.threads), None)
        sys.stdout.buffer.write(generate(kiln, model, session, args.prompt, args.n_predict) + b"\n")
    except KilnError as e:
        print(f"generate.py: {e}", file=sys.stderr)
        return 1
    finally:
        if session:
            lib.kiln_session_free(session)
        if model:
            lib.kiln_model_free(model)
    return 0


if __name__ == "__main__":
    sys.exit(main())
