# kiln_quickstart_model(<name> GGUF <path>)
# kiln_quickstart_model(<name> PRESET <preset> TYPE <type>)
#
# The quickstart's model: kiln_add_model (or kiln_add_synthetic_model) with
# the default context, batch and KV cache, its weights built into the program
# with -DKILN_EMBED=ON, after checking that none of the targets it makes
# (<name>, <name>_model, <name>-bench, <name>-perplexity, <name>-server,
# <name>_shared, <name>-pack) is already taken. A taken name stops the
# configure step with the target it clashes with and how to choose another
# name, instead of CMake's "another target with the same name already exists"
# pointing into kiln's files.
function(kiln_quickstart_model name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "GGUF;PRESET;TYPE" "")
  if(NOT name MATCHES "^[A-Za-z0-9_][A-Za-z0-9_.+-]*$")
    message(FATAL_ERROR "kiln: '${name}' cannot name a model (a CMake target and a program): use letters, digits and "
                        "'_' '-' '.' '+', not starting with '-' '.' '+'; pick a name with: "
                        "scripts/quickstart.sh --name NAME model.gguf")
  endif()
  foreach(target ${name} ${name}_model ${name}-bench ${name}-perplexity ${name}-server ${name}_shared ${name}-pack)
    if(TARGET ${target})
      message(FATAL_ERROR "kiln: the model name '${name}' clashes with kiln's own target '${target}'; "
                          "pick another name with: scripts/quickstart.sh --name NAME model.gguf")
    endif()
  endforeach()
  set(embed)
  if(KILN_EMBED)
    set(embed EMBED)
  endif()
  if(ARG_GGUF)
    kiln_add_model(${name} GGUF "${ARG_GGUF}" ${embed})
  else()
    kiln_add_synthetic_model(${name} PRESET ${ARG_PRESET} TYPE ${ARG_TYPE} ${embed})
  endif()
endfunction()
