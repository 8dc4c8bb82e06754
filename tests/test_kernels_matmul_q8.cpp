// Matmul for the 32-element weight types Q8_0 and Q4_0, against the scalar
// reference, with the numerics contract (kernel_checks.hpp): they multiply
// activations rounded to Q8 blocks.
#include <doctest/doctest.h>

#include "tests/support/kernel_checks.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

TEST_CASE("matmul: Q8_0") {
  check_matmul_all_rows<TensorType::Q8_0, 32>();
  check_matmul_all_rows<TensorType::Q8_0, 96>();
  check_matmul_all_rows<TensorType::Q8_0, 288>();
}

TEST_CASE("matmul: Q4_0") {
  check_matmul_all_rows<TensorType::Q4_0, 32>();
  check_matmul_all_rows<TensorType::Q4_0, 96>();
  check_matmul_all_rows<TensorType::Q4_0, 288>();
}

}  // namespace
