# ctest vocab_variants_name_their_inputs: each .ids file in this folder names
# the sha256 of the files llama.cpp tokenized: the base vocab and its texts in
# ../shared, this folder's texts, and the variant write_vocab_variant wrote
# from them. The build's write_vocab_variant must write that same variant
# again, or the ids describe other files (regenerate them as README.md says).
#   cmake -DDIR=<this folder> -DSHARED=<../shared> -DWRITER=<write_vocab_variant> -DSUFFIX=<.llama.cpp-*.ids>
#         -DOUT=<scratch folder> -P check_inputs.cmake
include("${CMAKE_CURRENT_LIST_DIR}/../support/check_named_sha256.cmake")
execute_process(COMMAND "${WRITER}" --list OUTPUT_VARIABLE listing RESULT_VARIABLE failed)
if(failed)
  message(FATAL_ERROR "${WRITER} --list failed")
endif()
string(STRIP "${listing}" listing)
string(REPLACE "\n" ";" variants "${listing}")
file(MAKE_DIRECTORY "${OUT}")
foreach(variant ${variants})
  string(REPLACE " " ";" fields "${variant}")
  list(GET fields 0 name)
  list(GET fields 1 base)
  set(ids "${DIR}/${name}${SUFFIX}")
  if(NOT EXISTS "${ids}")
    message(FATAL_ERROR "${ids} is missing: make it as README.md says")
  endif()
  execute_process(COMMAND "${WRITER}" ${name} "${OUT}/${name}.gguf" RESULT_VARIABLE failed)
  if(failed)
    message(FATAL_ERROR "${WRITER} ${name} failed")
  endif()
  set(vocab "${SHARED}/tokenizer-tests/ggml-vocab-${base}.gguf")
  foreach(input "base|${vocab}" "shared texts|${vocab}.inp" "own texts|${DIR}/texts.inp"
                "variant|${OUT}/${name}.gguf")
    string(REPLACE "|" ";" input "${input}")
    list(GET input 0 what)
    list(GET input 1 path)
    check_named_sha256("${ids}" "${what}" "${path}" "regenerate the ids (tests/vocab_variants/README.md)")
  endforeach()
endforeach()
list(LENGTH variants count)
message(STATUS "the ids of ${count} test vocabularies name the files they were made from")
