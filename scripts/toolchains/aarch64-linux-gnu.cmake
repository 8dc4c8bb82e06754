# Cross-compiling kiln for 64-bit Arm Linux with Debian's g++-aarch64-linux-gnu;
# programs built here (kiln-codegen during the build, tests under ctest) run
# through qemu-user (Debian's qemu-user). Used by .ci/isa-matrix.sh:
#   cmake -S . -B build-arm -DCMAKE_TOOLCHAIN_FILE=scripts/toolchains/aarch64-linux-gnu.cmake \
#         -DKILN_ARCH=armv8.2-a+dotprod -DXSIMD_INCLUDE_DIR=DIR -DDOCTEST_INCLUDE_DIR=DIR \
#         -DKILN_XXHASH_INCLUDE_DIR=DIR -DKILN_JSON_INCLUDE_DIR=DIR
# xsimd, doctest, xxHash and nlohmann-json are used as headers, but their
# Debian packages live in the host's /usr/include, which must not come before
# the Arm C library's headers: DIR is a folder holding just those (links to
# /usr/include/xsimd, doctest, xxhash.h and nlohmann).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)  # the C API example
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
