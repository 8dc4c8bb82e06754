// The machine probe: its per-core peaks measure the instruction they name,
// and its cache file reads back what was written, or fails clearly.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "engine/error/error.hpp"
#include "apps/machine_probe.hpp"

namespace fs = std::filesystem;

namespace {

fs::path scratch_dir() {
  const fs::path dir = fs::temp_directory_path() / ("kiln_test_machine_probe_" + std::to_string(getpid()));
  fs::create_directories(dir);
  return dir;
}

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

}  // namespace

TEST_CASE("the per-core peaks are measured with a named instruction and are physically possible") {
  kiln::MachineLimits m;
  kiln::probe_core_peaks(m);
  INFO("fp32: " << m.fp32_gflops_per_core << " GFLOP/s by " << m.fp32_method << "; int8: " << m.int8_gops_per_core
                << " GOP/s by " << m.int8_method);
  // Not a speed check: a bound no core reaches (about 100x today's fastest)
  // catches a loop the compiler removed from the timed span, which once
  // reported 2.5e8 GFLOP/s.
  constexpr double kImpossible = 1e5;
  if (m.fp32_method.rfind("not measured", 0) == 0) {
    CHECK(m.fp32_gflops_per_core == 0);
  } else {
    CHECK(m.fp32_gflops_per_core > 0);
    CHECK(m.fp32_gflops_per_core < kImpossible);
  }
  if (m.int8_method.rfind("not measured", 0) == 0) {
    CHECK(m.int8_gops_per_core == 0);
  } else {
    CHECK(m.int8_gops_per_core > 0);
    CHECK(m.int8_gops_per_core < 4 * kImpossible);
  }
}

TEST_CASE("machine limits survive a save and load") {
  const fs::path dir = scratch_dir();
  kiln::MachineLimits m;
  m.cpu = "Test \"CPU\" 9000 \\ 2.0GHz";  // quotes and a backslash, escaped in the file
  m.read_gbps = {12.5, 23.25};
  m.fp32_gflops_per_core = 64.5;
  m.fp32_method = "vfmadd231ps ymm (FMA)";
  m.int8_gops_per_core = 256;
  m.int8_method = "vpmaddubsw (AVX2)";
  const std::string path = (dir / "machine.json").string();
  kiln::save_limits(m, path);
  const kiln::MachineLimits r = kiln::load_limits(path);
  CHECK(r.cpu == m.cpu);
  CHECK(r.read_gbps == m.read_gbps);
  CHECK(r.fp32_gflops_per_core == m.fp32_gflops_per_core);
  CHECK(r.fp32_method == m.fp32_method);
  CHECK(r.int8_gops_per_core == m.int8_gops_per_core);
  CHECK(r.int8_method == m.int8_method);
  CHECK(r.bandwidth(1) == 12.5);
  CHECK(r.bandwidth(8) == 23.25);  // more threads than measured: the largest
  fs::remove_all(dir);
}

TEST_CASE("a damaged or older machine limits file is refused with its name and the missing field") {
  const fs::path dir = scratch_dir();
  const std::string path = (dir / "machine.json").string();
  // Written before the FP32 method was recorded: its peak may be the broken one.
  write_text(path, "{\n  \"cpu\": \"x\",\n  \"read_gbps\": [1],\n  \"fp32_gflops_per_core\": 2,\n"
                   "  \"int8_gops_per_core\": 3,\n  \"int8_method\": \"y\"\n}\n");
  CHECK_THROWS_WITH_AS(kiln::load_limits(path), doctest::Contains("has no 'fp32_method'"), kiln::Error);
  write_text(path, "{\n  \"cpu\": \"x\",\n  \"read_gbps\": [],\n  \"fp32_gflops_per_core\": 2,\n  \"fp32_method\": \"z\",\n"
                   "  \"int8_gops_per_core\": 3,\n  \"int8_method\": \"y\"\n}\n");
  CHECK_THROWS_AS(kiln::load_limits(path), kiln::Error);
  write_text(path, "{\n  \"cpu\": \"x\",\n  \"read_gbps\": [1],\n  \"fp32_gflops_per_core\": fast,\n  \"fp32_method\": \"z\",\n"
                   "  \"int8_gops_per_core\": 3,\n  \"int8_method\": \"y\"\n}\n");
  CHECK_THROWS_WITH_AS(kiln::load_limits(path), doctest::Contains("is not a JSON object"), kiln::Error);
  write_text(path, "{\n  \"cpu\": \"x\",\n  \"read_gbps\": [1],\n  \"fp32_gflops_per_core\": \"fast\",\n  \"fp32_method\": \"z\",\n"
                   "  \"int8_gops_per_core\": 3,\n  \"int8_method\": \"y\"\n}\n");
  CHECK_THROWS_WITH_AS(kiln::load_limits(path), doctest::Contains("malformed number in 'fp32_gflops_per_core'"),
                       kiln::Error);
  CHECK_THROWS_WITH_AS(kiln::load_limits((dir / "absent.json").string()), doctest::Contains("--probe"), kiln::Error);
  fs::remove_all(dir);
}
