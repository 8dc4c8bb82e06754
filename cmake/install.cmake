# `cmake --install`: kiln's libraries, headers and build-time tools, and a
# CMake package so that find_package(kiln) then kiln_add_model(...) works as
# after add_subdirectory(kiln). Everything a package user needs has a kiln::
# name (see the aliases in the top-level CMakeLists.txt).
include(CMakePackageConfigHelpers)
set(kiln_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)

# The instruction set the installed libraries were compiled for, for the model
# code kiln_add_model generates later. -march=native would mean the CPU of
# whichever machine builds that code, so it is recorded as the flags it stood
# for here (gcc's driver lists them: `-###`); other values are names already.
set(kiln_installed_arch_flags -march=${KILN_ARCH})
if(KILN_ARCH STREQUAL "native" AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -march=native "-###" -E -x c++ - INPUT_FILE /dev/null
                  OUTPUT_QUIET ERROR_VARIABLE driver_lines RESULT_VARIABLE driver_status)
  string(REGEX MATCH "cc1plus[^\n]*" compiler_line "${driver_lines}")
  string(REGEX MATCHALL " \"?-m[^ ]+" native_flags "${compiler_line}")
  list(TRANSFORM native_flags REPLACE "[ \"]" "")
  if(NOT driver_status EQUAL 0 OR NOT native_flags MATCHES "-march=")
    message(FATAL_ERROR "kiln: cannot tell which flags -march=native stands for with ${CMAKE_CXX_COMPILER}")
  endif()
  set(kiln_installed_arch_flags ${native_flags})
endif()
target_compile_options(kiln_arch INTERFACE "$<INSTALL_INTERFACE:${kiln_installed_arch_flags}>")

install(TARGETS kiln_arch kiln_kernels kiln_files kiln_gguf kiln_engine kiln_chat kiln_grammar kiln_models kiln_capi
        kiln_cli_support kiln_cli kiln_machine_probe kiln_bench kiln_perplexity kiln-codegen kiln-synth kiln-chat-template
        EXPORT kilnTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT kilnTargets NAMESPACE kiln:: DESTINATION ${kiln_cmake_dir})

# The header trees the generated model code and its users include, whole
# (new folders under them are installed without a change here).
install(DIRECTORY engine kernels models apps capi DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kiln
        FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h")

configure_package_config_file(cmake/kilnConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/kilnConfig.cmake
                              INSTALL_DESTINATION ${kiln_cmake_dir})
# 0.x: a minor version may change the generated code's interface.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/kilnConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/kilnConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/kilnConfigVersion.cmake
              models/kiln_add_model.cmake models/kiln_capi.map
        DESTINATION ${kiln_cmake_dir})
