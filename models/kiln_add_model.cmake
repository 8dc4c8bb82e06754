# kiln_add_model(<name> GGUF <path> [CTX <n>] [BATCH <n>] [KV f16|f32] [SWA_FULL] [EMBED])
#
# Compiles the model in a GGUF file into:
#   <name>_model  a static library (include "<name>.hpp", call kiln::models::<name>::load())
#   <name>_timed  the model's time_kernels (its forward pass with every kernel
#                 timed: a second compile of the pass, which only -bench links)
#   <name>        its command-line program (in <build>/bin)
#   <name>-bench  its benchmark program (in <build>/bin)
#   <name>_shared lib<name>.so (in <build>/lib): the model behind the C API of
#                 capi/kiln.h, exporting exactly that API (kiln_* functions)
#   <name>-perplexity  its perplexity program (in <build>/bin)
#   <name>-server its OpenAI-compatible HTTP server (in <build>/bin), where kiln
#                 was built with its HTTP package (kiln::server)
# Codegen runs at build time and again whenever the GGUF or kiln-codegen changes.
# The generated code is compiled with the instruction set of kiln's libraries
# (kiln::arch); the calling project's own targets are left as they are.
# Works the same after add_subdirectory(kiln) and after find_package(kiln).
# CTX is the KV cache size (default: the model's context length, at most 4096);
# BATCH the most tokens one forward call ingests (default 512, at most CTX);
# KV the element type of the KV cache (default f16, as llama.cpp; f32 doubles
# the cache's memory, for comparisons with F32-attention references).
# SWA_FULL keeps every position in sliding-window layers' caches too, instead
# of a ring of their window and a batch: a cached prefix is then reusable
# whatever its length (README, "What runs"), at the memory of a global layer.
# EMBED builds the weights into the library (and so into both programs), in
# the layout the kernels read: <name>-pack writes them (<name>.weights) at
# build time, and the programs run with no GGUF (-m still takes one).
# Without EMBED, load() finds the GGUF through $KILN_MODEL_PATH, next to the
# program, or where it was at build time (engine/model/model_path.hpp).
function(kiln_add_model name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "EMBED;SWA_FULL" "GGUF;CTX;BATCH;KV" "")
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
  # The version script of every lib<name>.so, next to this file (source tree
  # and install alike); taken from the function's own directory because the
  # caller's scope, after add_subdirectory(kiln), sees none of kiln's variables.
  set(capi_exports "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/kiln_capi.map")
  set(generated "${out}/${name}.hpp" "${out}/${name}.forward.hpp" "${out}/${name}.gen.cpp" "${out}/${name}.timed.cpp"
                "${out}/${name}.main.cpp" "${out}/${name}.bench.cpp" "${out}/${name}.perplexity.cpp"
                "${out}/${name}.server.cpp" "${out}/${name}.capi.cpp")
  set(codegen_args)
  if(ARG_SWA_FULL)
    list(APPEND codegen_args --swa-full)
  endif()
  if(ARG_EMBED)
    list(APPEND generated "${out}/${name}.pack.cpp" "${out}/${name}.weights.cpp")
    list(APPEND codegen_args --embed "${out}/${name}.weights")
  endif()
  add_custom_command(
    OUTPUT ${generated}
    COMMAND kiln::codegen "${gguf}" --name "${name}" --out-dir "${out}" --ctx ${ARG_CTX} --batch ${ARG_BATCH} --kv ${ARG_KV}
            ${codegen_args}
    DEPENDS kiln::codegen "${gguf}"
    COMMENT "kiln: generating model ${name} from ${gguf}"
    VERBATIM)

  add_library(${name}_model STATIC "${out}/${name}.gen.cpp" "${out}/${name}.hpp" "${out}/${name}.forward.hpp")
  target_include_directories(${name}_model PUBLIC "${out}")
  target_link_libraries(${name}_model PUBLIC kiln::models PRIVATE kiln::arch)
  set_target_properties(${name}_model PROPERTIES POSITION_INDEPENDENT_CODE ON)  # also in lib<name>.so
  add_library(${name}_timed STATIC "${out}/${name}.timed.cpp")
  target_link_libraries(${name}_timed PUBLIC ${name}_model PRIVATE kiln::arch)
  if(ARG_EMBED)
    # The packer is built for the model's instruction set, like the layout it
    # writes (run through CMAKE_CROSSCOMPILING_EMULATOR when cross-compiling).
    add_executable(${name}-pack "${out}/${name}.pack.cpp")
    target_include_directories(${name}-pack PRIVATE "${out}")
    target_link_libraries(${name}-pack PRIVATE kiln::models kiln::cli_support kiln::arch)
    set_target_properties(${name}-pack PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${out}")
    add_custom_command(
      OUTPUT "${out}/${name}.weights"
      COMMAND ${name}-pack "${gguf}" "${out}/${name}.weights"
      DEPENDS ${name}-pack "${gguf}"
      COMMENT "kiln: packing the weights of ${name} for its programs"
      VERBATIM)
    # .incbin reads the image: the object is rebuilt when it changes.
    set_source_files_properties("${out}/${name}.weights.cpp" PROPERTIES OBJECT_DEPENDS "${out}/${name}.weights")
    target_sources(${name}_model PRIVATE "${out}/${name}.weights.cpp" "${out}/${name}.weights")
    # Segments aligned to 2 MB in the file as in memory: the image's 2 MB
    # boundaries then fall on the file's, so the kernel can map its
    # page-cache folios with 2 MB pages (models/weight_image.hpp).
    target_link_options(${name}_model INTERFACE LINKER:-z,max-page-size=0x200000)
  endif()

  add_executable(${name} "${out}/${name}.main.cpp")
  target_link_libraries(${name} PRIVATE ${name}_model kiln::cli kiln::arch)
  add_executable(${name}-bench "${out}/${name}.bench.cpp")
  target_link_libraries(${name}-bench PRIVATE ${name}_timed kiln::bench kiln::arch)
  add_executable(${name}-perplexity "${out}/${name}.perplexity.cpp")
  target_link_libraries(${name}-perplexity PRIVATE ${name}_model kiln::perplexity kiln::arch)
  set_target_properties(${name} ${name}-bench ${name}-perplexity PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/bin")

  # lib<name>.so: the C API's code whole (nothing in the model calls it), the
  # model, and a version script that keeps every other symbol local (the
  # engine's, and the C++ library's template instances, which default
  # visibility would export). Its users see only kiln.h (kiln::capi's folder).
  add_library(${name}_shared SHARED "${out}/${name}.capi.cpp")
  target_link_libraries(${name}_shared PRIVATE ${name}_model "$<LINK_LIBRARY:WHOLE_ARCHIVE,kiln::capi>" kiln::arch)
  target_include_directories(${name}_shared INTERFACE $<TARGET_PROPERTY:kiln::capi,INTERFACE_INCLUDE_DIRECTORIES>)
  target_link_options(${name}_shared PRIVATE "LINKER:--version-script=${capi_exports}" "LINKER:--no-undefined")
  set_target_properties(${name}_shared PROPERTIES OUTPUT_NAME ${name} LIBRARY_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/lib"
                        CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON LINK_DEPENDS "${capi_exports}")
  if(TARGET kiln::server)
    add_executable(${name}-server "${out}/${name}.server.cpp")
    target_link_libraries(${name}-server PRIVATE ${name}_model kiln::server kiln::arch)
    set_target_properties(${name}-server PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/bin")
  endif()
  kiln_warn_if_unoptimized()
endfunction()

# kiln's code is meant to run optimized; a project configured without a build
# type (single-configuration generators) compiles it at -O0. Said once.
function(kiln_warn_if_unoptimized)
  get_property(multi_config GLOBAL PROPERTY GENERATOR_IS_MULTI_CONFIG)
  get_property(warned GLOBAL PROPERTY KILN_WARNED_UNOPTIMIZED)
  if(NOT multi_config AND NOT CMAKE_BUILD_TYPE AND NOT warned)
    message(WARNING "kiln: CMAKE_BUILD_TYPE is empty, so the model code compiles unoptimized; "
                    "configure with -DCMAKE_BUILD_TYPE=Release")
    set_property(GLOBAL PROPERTY KILN_WARNED_UNOPTIMIZED TRUE)
  endif()
endfunction()

# kiln_add_synthetic_model(<name> [PRESET <preset>] [TYPE <type>] [SEED <n>] [SYNTH_ARGS <kiln-synth flags>...]
#                          [CTX <n>] [BATCH <n>] [KV f16|f32] [SWA_FULL] [EMBED])
#
# Generates a random-weight GGUF with kiln-synth at build time
# (<build>/models/<name>.gguf), then compiles it like kiln_add_model.
# SYNTH_ARGS passes any other kiln-synth flags (sizes, per-role types, --arch,
# --tied, --rope-freqs); without a PRESET they must give every size.
function(kiln_add_synthetic_model name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "EMBED;SWA_FULL" "PRESET;TYPE;SEED;CTX;BATCH;KV" "SYNTH_ARGS")
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
  file(MAKE_DIRECTORY "${CMAKE_BINARY_DIR}/models")  # kiln-synth writes into an existing folder only
  add_custom_command(
    OUTPUT "${gguf}"
    COMMAND kiln::synth ${synth_args} --seed ${ARG_SEED} -o "${gguf}"
    DEPENDS kiln::synth
    COMMENT "kiln: writing synthetic model ${name} (random weights) to ${gguf}"
    VERBATIM)
  set(extra)
  foreach(opt CTX BATCH KV)
    if(DEFINED ARG_${opt})
      list(APPEND extra ${opt} ${ARG_${opt}})
    endif()
  endforeach()
  foreach(flag EMBED SWA_FULL)
    if(ARG_${flag})
      list(APPEND extra ${flag})
    endif()
  endforeach()
  kiln_add_model(${name} GGUF "${gguf}" ${extra})
endfunction()
