#!/usr/bin/env bash
# CI: builds the libFuzzer targets of tests/fuzz with clang++ (ASan, UBSan,
# coverage) and runs each for KILN_FUZZ_SECONDS (default 30) from a seed
# corpus made at run time from ../shared (models, tokenizer vocabularies and
# chat templates, never committed), kiln-synth, kiln's own test templates
# (tests/chat/templates, tests/fuzz/chat_template_seeds), a few request
# bodies, and grammars and JSON schemas (tests/fuzz/grammar_seeds). Fails
# on any crash, sanitizer report, timeout or oversized allocation; libFuzzer
# leaves the input that caused it as $build/artifacts/crash-* (or leak-,
# timeout-, oom-).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh clang libclang-rt-14-dev libomp-14-dev
build=${KILN_FUZZ_BUILD_DIR:-build-fuzz}
shared=$(realpath -m "${KILN_SHARED_DIR:-../shared}")
seconds=${KILN_FUZZ_SECONDS:-30}
if [ ! -d "$shared/tokenizer-tests" ] || [ ! -d "$shared/models" ]; then
  echo "fuzz: $shared has no models/ or tokenizer-tests/; fuzzing skipped" >&2
  exit 0
fi

cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_FUZZ=ON \
  -DKILN_SANITIZE=ON -DKILN_BUILD_TESTS=ON \
  -DKILN_SHARED_DIR="$shared" -DKILN_MODEL= -DKILN_SYNTHETIC_PRESET= >/dev/null
cmake --build "$build" -j"$(nproc)" --target fuzz_gguf fuzz_state_file fuzz_tokenizer_spm fuzz_tokenizer_bpe \
  fuzz_chat_template fuzz_openai_request fuzz_http_request fuzz_gbnf fuzz_json_schema fuzz_seeds kiln-synth >/dev/null

seeds=$build/seeds
rm -rf "$seeds"
mkdir -p "$seeds"/{gguf,state,spm,bpe,template,request,http,gbnf,schema} "$build/artifacts"
# GGUF: the small real model and tiny synthetic models of both architectures and several weight types.
cp "$shared/models/stories260K/stories260K.gguf" "$seeds/gguf/"
tiny=(--embd 32 --layers 1 --heads 2 --kv-heads 1 --ff 64 --vocab 300 --ctx 32)
"$build/bin/kiln-synth" "${tiny[@]}" --type q8_0 -o "$seeds/gguf/tiny-llama.gguf"
"$build/bin/kiln-synth" "${tiny[@]}" --arch qwen2 --type f16 -o "$seeds/gguf/tiny-qwen2.gguf"
"$build/bin/kiln-synth" "${tiny[@]}" --embd 256 --ff 256 --tied --rope-freqs --type q4_k -o "$seeds/gguf/tiny-tied.gguf"
"$build/tests/fuzz/fuzz_seeds" "$seeds/state"
# Text: the tokenizer test inputs, one file per vocabulary's input set.
for f in "$shared"/tokenizer-tests/*.inp; do
  name=$(basename "$f" .inp)
  case "$name" in *llama-spm*|*phi-3*) cp "$f" "$seeds/spm/$name" ;; *) cp "$f" "$seeds/bpe/$name" ;; esac
done

# Chat templates: kiln's test templates, the real ones, and hostile ones that
# hit each of the renderer's limits (tests/test_chat_template_limits.cpp).
cp tests/chat/templates/*.jinja "$shared"/chat-templates/*.jinja tests/fuzz/chat_template_seeds/*.jinja "$seeds/template/"
# Request bodies: a chat, one with tools and a call, and a completion (the first byte picks the endpoint: odd is chat).
printf '%s' '{"model":"m","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":[{"type":"text","text":"Hi"}]}],"max_tokens":8,"temperature":0.7,"top_p":0.9,"stop":["\n"],"stream":true,"seed":42}' \
  >"$seeds/request/chat.json"
printf '%s' '{"messages":[{"role":"user","content":"Weather?"},{"role":"assistant","content":null,"tool_calls":[{"id":"abc123XYZ","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},{"role":"tool","tool_call_id":"abc123XYZ","content":"sunny"}],"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string","maxLength":8},"days":{"type":"integer","minimum":1}},"required":["city"]}}}],"tool_choice":"required","parallel_tool_calls":false}' \
  >"$seeds/request/tools.json"
printf '%s' ' {"prompt":"Once upon a time","max_tokens":16,"top_k":40,"min_p":0.05,"stop":"x","logprobs":null}' \
  >"$seeds/request/completion.json"
# What clients send (the first byte picks the pieces' size): a completion with
# a chunked body, and pipelined requests with Content-Length and keep-alive.
printf '%s' $'\x05POST /v1/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n5;a=b\r\n{"a":\r\n3\r\n 1}\r\n0\r\nTrailer: t\r\n\r\n' \
  >"$seeds/http/chunked"
printf '%s' $'\x01GET /health?x=1 HTTP/1.0\nConnection: keep-alive\n\nPOST / HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}' \
  >"$seeds/http/pipelined"

# Grammars (GBNF) and JSON schemas.
cp tests/fuzz/grammar_seeds/*.gbnf "$seeds/gbnf/"
cp tests/fuzz/grammar_seeds/*.json "$seeds/schema/"

run() {  # name seed-folder [libFuzzer flags]
  local name=$1 seed=$2
  shift 2
  local corpus=$build/corpus/$name
  mkdir -p "$corpus"
  echo "fuzz: $name for $seconds s" >&2
  "$build/tests/fuzz/$name" "$corpus" "$seed" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -malloc_limit_mb=512 -print_final_stats=1 -artifact_prefix="$build/artifacts/$name-" "$@" 2>"$build/$name.log" ||
    { tail -n 60 "$build/$name.log" >&2; echo "fuzz: $name FAILED (log: $build/$name.log)" >&2; exit 1; }
  sed -n "s/^stat::number_of_executed_units: */fuzz: $name: inputs run: /p" "$build/$name.log" >&2
}
# A fuzzer runs on one core: as many at once as there are cores. A failing
# one ends the script (set -e) at the wait that collects it.
running=0
fuzz() {  # as run, in the background
  if [ "$running" -ge "$(nproc)" ]; then
    wait -n
    running=$((running - 1))
  fi
  run "$@" &
  running=$((running + 1))
}
fuzz fuzz_gguf "$seeds/gguf" -max_len=1200000
fuzz fuzz_state_file "$seeds/state"
fuzz fuzz_tokenizer_spm "$seeds/spm" -max_len=1024
fuzz fuzz_tokenizer_bpe "$seeds/bpe" -max_len=1024
fuzz fuzz_chat_template "$seeds/template" -max_len=8192
fuzz fuzz_openai_request "$seeds/request" -max_len=4096
fuzz fuzz_http_request "$seeds/http" -max_len=4096
fuzz fuzz_gbnf "$seeds/gbnf" -max_len=4096
fuzz fuzz_json_schema "$seeds/schema" -max_len=4096
while [ "$running" -gt 0 ]; do
  wait -n
  running=$((running - 1))
done
echo "fuzz: all targets ran without a finding" >&2
