# kiln_add_model(<name> GGUF <path> [CTX <n>] [BATCH <n>] [KV f16|f32])
#
# Compiles the model in a GGUF file into:
#   <name>_model  a static library (include "<name>.hpp", call kiln::models::<name>::load())
#   <name>        its command-line program (in <build>/bin)
#   <name>-bench  its benchmark program (in <build>/bin)
# Codegen runs at build time and again whenever the GGUF or kiln-codegen changes.
# CTX is the KV cache size (default: the model's context length, at most 4096);
# BATCH the most tokens one forward call ingests (default 512, at most CTX);
# KV the element type of the KV cache (default f16, as llama.cpp; f32 doubles
# the cache's memory, for comparisons with F32-attention references).
function(kiln_add_model name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "GGUF;CTX;BATCH;KV" "")
  if(NOT ARG_GGUF)
    message(FATAL_ERROR "kiln_add_model(${name}): GGUF <path> is required")
  endif()
  get_filename_component(gguf "${ARG_GGUF}" ABSOLUTE)
  if(NOT DEFINED ARG_CTX)
    set(ARG_CTX 0)
  endif()
  if(NOT DEFINED ARG_BATCH)
    set(ARG_BATCH 0)
  endif()
  if(NOT DEFINED ARG_KV)
    set(ARG_KV f16)
  endif()

  set(out "${CMAKE_BINARY_DIR}/models/${name}")
  add_custom_command(
    OUTPUT "${out}/${name}.hpp" "${out}/${name}.forward.hpp" "${out}/${name}.gen.cpp" "${out}/${name}.timed.cpp"
           "${out}/${name}.main.cpp" "${out}/${name}.bench.cpp"
    COMMAND kiln-codegen "${gguf}" --name "${name}" --out-dir "${out}" --ctx ${ARG_CTX} --batch ${ARG_BATCH} --kv ${ARG_KV}
    DEPENDS kiln-codegen "${gguf}"
    COMMENT "kiln: generating model ${name} from ${gguf}"
    VERBATIM)

  add_library(${name}_model STATIC "${out}/${name}.gen.cpp" "${out}/${name}.timed.cpp" "${out}/${name}.hpp"
              "${out}/${name}.forward.hpp")
  target_include_directories(${name}_model PUBLIC "${out}")
  target_link_libraries(${name}_model PUBLIC kiln_models)

  add_executable(${name} "${out}/${name}.main.cpp")
  target_link_libraries(${name} PRIVATE ${name}_model kiln_cli)
  add_executable(${name}-bench "${out}/${name}.bench.cpp")
  target_link_libraries(${name}-bench PRIVATE ${name}_model kiln_bench)
  set_target_properties(${name} ${name}-bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/bin")
endfunction()

# kiln_add_synthetic_model(<name> [PRESET <preset>] [TYPE <type>] [SEED <n>] [SYNTH_ARGS <kiln-synth flags>...]
#                          [CTX <n>] [BATCH <n>] [KV f16|f32])
#
# Generates a random-weight GGUF with kiln-synth at build time
# (<build>/models/<name>.gguf), then compiles it like kiln_add_model.
# SYNTH_ARGS passes any other kiln-synth flags (sizes, per-role types, --arch,
# --tied, --rope-freqs); without a PRESET they must give every size.
function(kiln_add_synthetic_model name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "PRESET;TYPE;SEED;CTX;BATCH;KV" "SYNTH_ARGS")
  set(synth_args ${ARG_SYNTH_ARGS})
  if(ARG_PRESET)
    list(PREPEND synth_args --preset ${ARG_PRESET})
  endif()
  if(ARG_TYPE)
    list(PREPEND synth_args --type ${ARG_TYPE})
  endif()
  if(NOT ARG_SEED)
    set(ARG_SEED 1)
  endif()
  set(gguf "${CMAKE_BINARY_DIR}/models/${name}.gguf")
  add_custom_command(
    OUTPUT "${gguf}"
    COMMAND kiln-synth ${synth_args} --seed ${ARG_SEED} -o "${gguf}"
    DEPENDS kiln-synth
    COMMENT "kiln: writing synthetic model ${name} (random weights) to ${gguf}"
    VERBATIM)
  set(extra)
  foreach(opt CTX BATCH KV)
    if(DEFINED ARG_${opt})
      list(APPEND extra ${opt} ${ARG_${opt}})
    endif()
  endforeach()
  kiln_add_model(${name} GGUF "${gguf}" ${extra})
endfunction()
