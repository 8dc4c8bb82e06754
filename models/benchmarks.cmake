# The benchmark set (configure with -DKILN_BENCHMARKS=ON, then build the
# `benchmark` target): synthetic presets of real model shapes in several
# weight types, plus stories260K when ../shared has it. Contexts hold a 512-token
# prompt after 4,096 cached positions (`-d 4096`). The synthetic GGUFs
# are written at build time (about 10 GB in all). Gemma 3 1B has no Q4_K_M
# here: its 1152-wide rows are not whole K-quant blocks. q4_k_m is kiln-synth's mix of
# llama-quantize's Q4_K_M (codegen/synth.hpp), the format most downloads come in.
set(kiln_bench_programs)
foreach(spec stories110m:f32 stories110m:q8_0 tinyllama-1.1b:f16 tinyllama-1.1b:bf16 tinyllama-1.1b:q8_0 tinyllama-1.1b:q4_0
             tinyllama-1.1b:q4_k_m qwen3-0.6b:q8_0 qwen3-0.6b:q4_k_m gemma3-1b:q8_0)
  string(REPLACE ":" ";" parts ${spec})
  list(GET parts 0 preset)
  list(GET parts 1 type)
  kiln_add_synthetic_model(bench-${preset}-${type} PRESET ${preset} TYPE ${type} CTX 4608 BATCH 512)
  list(APPEND kiln_bench_programs bench-${preset}-${type}-bench)
endforeach()
# Qwen3-30B-A3B's layer shape (128 experts of width 768, 8 per token) on 4 of
# its 48 layers: 3.3 GB in Q8_0.
kiln_add_synthetic_model(bench-qwen3-30b-a3b-4l-q8_0 PRESET qwen3-30b-a3b TYPE q8_0 CTX 4608 BATCH 512
                         SYNTH_ARGS --layers 4)
list(APPEND kiln_bench_programs bench-qwen3-30b-a3b-4l-q8_0-bench)
# gpt-oss-20b's layer shape (32 experts of width 2880, 4 per token) on 2 of
# its 24 layers, experts in MXFP4 as it ships, the rest Q8_0: 2.1 GB.
kiln_add_synthetic_model(bench-gpt-oss-20b-2l-mxfp4 PRESET gpt-oss-20b TYPE q8_0 CTX 4608 BATCH 512
                         SYNTH_ARGS --layers 2 --type-experts mxfp4)
list(APPEND kiln_bench_programs bench-gpt-oss-20b-2l-mxfp4-bench)
if(EXISTS "${KILN_SHARED_DIR}/models/stories260K/stories260K.gguf")
  kiln_add_model(bench-stories260K GGUF "${KILN_SHARED_DIR}/models/stories260K/stories260K.gguf" CTX 4608 BATCH 512)
  list(APPEND kiln_bench_programs bench-stories260K-bench)
endif()

add_custom_target(benchmark
  COMMAND "${PROJECT_SOURCE_DIR}/scripts/benchmark.sh" "${CMAKE_BINARY_DIR}/bin" ${kiln_bench_programs}
  DEPENDS ${kiln_bench_programs}
  USES_TERMINAL
  COMMENT "kiln: running the benchmark set (takes several minutes)")
