// Matmul for the float weight types and get_rows for the float and 32-element
// ones, against the scalar reference, with the numerics contract
// (kernel_checks.hpp). Q8_0 and Q4_0 matmuls: test_kernels_matmul_q8.cpp
// (two files, so that the heaviest test compiles on two cores).
#include <doctest/doctest.h>

#include "tests/support/kernel_checks.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

TEST_CASE("matmul: F32") {
  check_matmul_all_rows<TensorType::F32, 7>();
  check_matmul_all_rows<TensorType::F32, 61>();
  check_matmul_all_rows<TensorType::F32, 172>();
  check_matmul_all_rows<TensorType::F32, 1043>();  // two k-blocks (matmul_float.hpp), the second short, and a scalar tail
  check_matmul_all_rows<TensorType::F32, 1056>();  // padded rows (float_rows.hpp), two k-blocks
}

TEST_CASE("matmul: F16") {
  check_matmul_all_rows<TensorType::F16, 7>();
  check_matmul_all_rows<TensorType::F16, 61>();
  check_matmul_all_rows<TensorType::F16, 172>();
  check_matmul_all_rows<TensorType::F16, 1043>();
  check_matmul_all_rows<TensorType::F16, 1088>();  // padded rows
}

TEST_CASE("get_rows: F32, F16, Q8_0, Q4_0") {
  check_get_rows<TensorType::F32, 61>();
  check_get_rows<TensorType::F16, 61>();
  check_get_rows<TensorType::Q8_0, 96>();
  check_get_rows<TensorType::Q4_0, 96>();
}

}  // namespace
