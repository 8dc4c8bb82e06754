#include <doctest/doctest.h>

#include "apps/resident_memory.hpp"

using kiln::status_bytes;

namespace {

// An excerpt of a real /proc/self/status (Linux 6.1).
const char* kStatus =
    "Name:\tbench\n"
    "VmPeak:\t  123456 kB\n"
    "VmSize:\t  120000 kB\n"
    "VmHWM:\t    6312 kB\n"
    "VmRSS:\t    6100 kB\n"
    "Threads:\t2\n";

}  // namespace

TEST_CASE("status_bytes reads a kB field of /proc/<pid>/status") {
  CHECK(status_bytes(kStatus, "VmHWM") == 6312 * 1024);
  CHECK(status_bytes(kStatus, "VmRSS") == 6100 * 1024);
  CHECK(status_bytes("VmHWM: 0 kB", "VmHWM") == 0);
  CHECK(status_bytes("VmHWM:12 kB\n", "VmHWM") == 12 * 1024);
}

TEST_CASE("status_bytes: a missing or malformed field is nullopt") {
  CHECK_FALSE(status_bytes(kStatus, "VmSwap"));
  CHECK_FALSE(status_bytes("", "VmHWM"));
  CHECK_FALSE(status_bytes(kStatus, "Vm"));              // a prefix of a key is not the key
  CHECK_FALSE(status_bytes(kStatus, "Threads"));         // no unit
  CHECK_FALSE(status_bytes("VmHWM:\t 12 MB\n", "VmHWM"));
  CHECK_FALSE(status_bytes("VmHWM:\t -3 kB\n", "VmHWM"));
  CHECK_FALSE(status_bytes("VmHWM:\t abc kB\n", "VmHWM"));
  CHECK_FALSE(status_bytes("VmHWM:\t 12 kB extra\n", "VmHWM"));
  CHECK_FALSE(status_bytes("XVmHWM:\t 12 kB\n", "VmHWM"));
}

TEST_CASE("this process reports its resident memory and its peak") {
  const auto peak = kiln::own_status_bytes("VmHWM"), now = kiln::own_status_bytes("VmRSS");
  REQUIRE(peak);  // the tests run on Linux
  REQUIRE(now);
  CHECK(*now > 0);
  CHECK(*peak > 0);  // not compared with *now: the second read may find more memory in use
}
