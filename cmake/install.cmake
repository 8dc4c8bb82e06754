# `cmake --install`: kiln's libraries, headers and build-time tools, and a
# CMake package so that find_package(kiln) then kiln_add_model(...) works as
# after add_subdirectory(kiln). Everything a package user needs has a kiln::
# name (see the aliases in the top-level CMakeLists.txt).
include(CMakePackageConfigHelpers)
set(kiln_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)

install(TARGETS kiln_arch kiln_kernels kiln_engine kiln_models kiln_cli kiln_bench kiln-codegen kiln-synth
        EXPORT kilnTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT kilnTargets NAMESPACE kiln:: DESTINATION ${kiln_cmake_dir})

# The header trees the generated model code and its users include, whole
# (new folders under them are installed without a change here).
install(DIRECTORY engine kernels models examples DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kiln
        FILES_MATCHING PATTERN "*.hpp")

configure_package_config_file(cmake/kilnConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/kilnConfig.cmake
                              INSTALL_DESTINATION ${kiln_cmake_dir})
# 0.x: a minor version may change the generated code's interface.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/kilnConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/kilnConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/kilnConfigVersion.cmake
              models/kiln_add_model.cmake
        DESTINATION ${kiln_cmake_dir})
