# check_named_sha256(<record> <label> <path> <regenerate hint>): <record>
# (a reference or ids file) names, on a line "# <label> sha256: <hex>", the
# file it was made from; stops with one line unless <path> is that file.
# Included by the -P scripts of tests/llamacpp and tests/vocab_variants.
function(check_named_sha256 record label path hint)
  file(STRINGS "${record}" line REGEX "^# ${label} sha256: " LIMIT_COUNT 1)
  string(REGEX REPLACE "^# ${label} sha256: ([0-9a-f]+).*" "\\1" want "${line}")
  file(SHA256 "${path}" got)
  if(NOT got STREQUAL want)
    get_filename_component(name "${record}" NAME)
    message(FATAL_ERROR "${path} is not the file ${name} was made from (sha256 ${got}, it names '${want}'): ${hint}")
  endif()
endfunction()
