// The reference data in ../shared (KILN_SHARED_DIR) that many tests read. A
// run without it says so: configured with -DKILN_NO_FIXTURES=ON, the test
// cases that need it are skipped and counted as skipped in doctest's summary;
// otherwise a missing fixture fails the case that needs it, naming the file.
#pragma once

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

namespace kiln::test {

#ifdef KILN_NO_FIXTURES
inline constexpr bool kNoFixtures = true;
#else
inline constexpr bool kNoFixtures = false;
#endif

// Decorates a TEST_CASE that reads ../shared: TEST_CASE("..." * kiln::test::needs_fixtures).
inline const doctest::skip needs_fixtures{kNoFixtures};

// The path of a fixture under KILN_SHARED_DIR; fails the test when it is missing.
inline std::string fixture(const std::string& relative_path) {
  const std::string path = std::string(KILN_SHARED_DIR) + "/" + relative_path;
  REQUIRE_MESSAGE(std::filesystem::exists(path), path << " not found (the tests need ../shared; configure with "
                                                        "-DKILN_NO_FIXTURES=ON to run without it)");
  return path;
}

}  // namespace kiln::test
