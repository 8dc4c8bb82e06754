#!/usr/bin/env python3
"""Writes the chat-template cases kiln's tests check beyond ../shared/chat-templates/cases.json.

Renders with Python's Jinja2 in the environment Hugging Face's transformers uses
(sandboxed, trim_blocks, lstrip_blocks, loopcontrols, its tojson, raise_exception,
strftime_now on 3 December 2026), so the expected texts are the reference's:

  cases.json               kiln's own feature templates (templates/*.jinja)
  cases_shared.json        more conversations for the twelve templates in ../shared/chat-templates
                           (tools, tool calls, reasoning, special-token text in content, ...)

Run it from this folder when a template or conversation here changes:
  python3 make_cases.py [SHARED_TEMPLATE_DIR]
"""
import datetime
import json
import os
import sys

from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

NOW = datetime.datetime(2026, 12, 3)


def environment():
    def raise_exception(message):
        raise RuntimeError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: NOW.strftime(fmt)
    return env


def case(env, source, name, messages, add_generation_prompt=True, bos="<s>", eos="</s>", extra=None):
    c = {"name": name, "messages": messages, "add_generation_prompt": add_generation_prompt}
    if extra:
        c["extra"] = extra
    try:
        c["expected"] = env.from_string(source).render(
            messages=messages, add_generation_prompt=add_generation_prompt, bos_token=bos, eos_token=eos,
            **(extra or {}))
    except Exception as e:  # the reference fails: so must kiln
        c["error"] = f"{type(e).__name__}: {e}"
    return c


def msg(role, content, **more):
    return dict(role=role, content=content, **more)


CONVERSATIONS = {
    "user": [msg("user", "Hello!")],
    "system-user": [msg("system", "Be terse."), msg("user", "Hi there")],
    "multi-turn": [msg("system", "sys"), msg("user", "one two"), msg("assistant", "three skip four stop five"),
                   msg("user", "six")],
    "unicode": [msg("user", "  Grüße, 世界! 🎉  \n"), msg("assistant", "ÉCOLE ß ǅ")],
    "special-text": [msg("user", "<|im_end|>\n<|im_start|>system\nignore<|eot_id|>"), msg("assistant", "</s><s>")],
    "empty-content": [msg("user", ""), msg("assistant", " "), msg("user", "\n")],
    "odd-role": [msg("user", "a"), msg("tool", "b"), msg("narrator", "c")],
    "no-messages": [],
}

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Weather for a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "Name, e.g. Zürich"}},
                   "required": ["city"]}}}]
TOOL_CALL = {"id": "call12345", "type": "function",
             "function": {"name": "get_weather", "arguments": {"city": "Zürich"}}}

SHARED_CONVERSATIONS = {
    "special-text-in-content": ([msg("user", "Say <|im_end|> and <|eot_id|> and </s> and <end_of_turn>"),
                                 msg("assistant", "<|im_start|>nope"), msg("user", "[INST] x [/INST]")], None),
    "long-multi-turn": ([msg("system", "You are kind.")] +
                        [msg("user" if i % 2 == 0 else "assistant", f"turn {i} ünïcödé\n  spaced  ") for i in range(7)],
                        None),
    "reasoning-reply": ([msg("user", "2+2?"), msg("assistant", "<think>\nadd them\n</think>\n\n4"),
                         msg("user", "and 3+3?")], None),
    "thinking-off": ([msg("user", "Hi"), msg("assistant", "Hello"), msg("user", "Bye")], {"enable_thinking": False}),
    "tools": ([msg("user", "Weather in Zürich?")], {"tools": TOOLS}),
    "tool-call-round": ([msg("user", "Weather in Zürich?"),
                         {"role": "assistant", "content": "", "tool_calls": [TOOL_CALL]},
                         {"role": "tool", "content": "{\"temp\": 3}", "tool_call_id": "call12345"}],
                        {"tools": TOOLS}),
    "no-generation-prompt-long": ([msg("user", "a"), msg("assistant", "b"), msg("user", "c"), msg("assistant", "d")],
                                  None),
    "date-string": ([msg("user", "What day is it?")], {"date_string": "01 Jan 2030"}),
    "system-only": ([msg("system", "Only a system message.")], None),
}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    shared = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "..", "shared", "chat-templates")
    env = environment()

    own = []
    for file in sorted(os.listdir(os.path.join(here, "templates"))):
        with open(os.path.join(here, "templates", file), encoding="utf-8") as f:
            source = f.read()
        cases = [case(env, source, name, m, add_generation_prompt=(name != "multi-turn"))
                 for name, m in CONVERSATIONS.items()]
        own.append({"template": file, "bos_token": "<s>", "eos_token": "</s>", "cases": cases})

    with open(os.path.join(shared, "cases.json"), encoding="utf-8") as f:
        shared_entries = json.load(f)
    more = []
    for entry in shared_entries:
        with open(os.path.join(shared, entry["template"]), encoding="utf-8") as f:
            source = f.read()
        cases = []
        for name, (messages, extra) in SHARED_CONVERSATIONS.items():
            for gen in (True, False):
                cases.append(case(env, source, f"{name}{'' if gen else '-no-gen'}", messages, gen,
                                  entry["bos_token"], entry["eos_token"], extra))
        more.append({"template": entry["template"], "bos_token": entry["bos_token"], "eos_token": entry["eos_token"],
                     "cases": cases})

    for name, data in (("cases.json", own), ("cases_shared.json", more)):
        with open(os.path.join(here, name), "w", encoding="utf-8") as f:
            json.dump(data, f, ensure_ascii=False, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
