# ctest llamacpp_refs_name_their_models: each reference file in this folder
# names the sha256 of the GGUF it was made from; the build's kiln-synth must
# have written that same file again, or the references describe another model
# (regenerate them as tests/llama_oracle/README.md says).
#   cmake -DREFS=<this folder> -DMODELS=<build>/models -P check_models.cmake
include("${CMAKE_CURRENT_LIST_DIR}/../support/check_named_sha256.cmake")
file(GLOB refs "${REFS}/*.ref-f32kv.txt")
list(LENGTH refs count)
if(count EQUAL 0)
  message(FATAL_ERROR "no reference files in ${REFS}")
endif()
foreach(ref ${refs})
  get_filename_component(name "${ref}" NAME)
  string(REPLACE ".ref-f32kv.txt" ".gguf" gguf "${name}")
  check_named_sha256("${ref}" model "${MODELS}/${gguf}"
                     "kiln-synth's output changed; regenerate the references (tests/llama_oracle/README.md)")
endforeach()
message(STATUS "${count} reference files name the models the build wrote")
