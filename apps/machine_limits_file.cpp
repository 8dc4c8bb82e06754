// The probe's cache (apps/machine_probe.hpp): MachineLimits as a JSON object,
// written and read with nlohmann-json.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "apps/machine_probe.hpp"
#include "engine/error/error.hpp"
#include "engine/files/atomic_file.hpp"
#include "engine/files/file_cache.hpp"

namespace kiln {

namespace {

using nlohmann::json;

const json& field(const json& file, const char* key, const std::string& path) {
  const auto it = file.find(key);
  if (it == file.end())
    throw Error(path + ": machine limits file has no '" + key + "' (written by another kiln version? run with --probe)");
  return *it;
}

std::string text_field(const json& file, const char* key, const std::string& path) {
  const json& v = field(file, key, path);
  if (!v.is_string()) throw Error(path + ": malformed text in '" + key + "'");
  return v.get<std::string>();
}

// Every measurement is a number of 0 or more.
double measurement(const json& v, const char* key, const std::string& path) {
  if (!v.is_number() || !(v.get<double>() >= 0)) throw Error(path + ": malformed number in '" + key + "'");
  return v.get<double>();
}

}  // namespace

void save_limits(const MachineLimits& m, const std::string& path) {
  const nlohmann::ordered_json file = {{"cpu", m.cpu},
                                       {"read_gbps", m.read_gbps},
                                       {"fp32_gflops_per_core", m.fp32_gflops_per_core},
                                       {"fp32_method", m.fp32_method},
                                       {"int8_gops_per_core", m.int8_gops_per_core},
                                       {"int8_method", m.int8_method}};
  // A CPU name that is not UTF-8 is written with U+FFFD, not refused.
  const std::string text = file.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  write_file_atomically(path, {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
}

MachineLimits load_limits(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot read machine limits (run with --probe first)");
  const json file = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!file.is_object()) throw Error(path + ": machine limits file is not a JSON object (run with --probe)");
  MachineLimits m;
  m.cpu = text_field(file, "cpu", path);
  const json& read_gbps = field(file, "read_gbps", path);
  if (!read_gbps.is_array() || read_gbps.empty()) throw Error(path + ": no bandwidth measurements");
  for (const json& v : read_gbps) m.read_gbps.push_back(measurement(v, "read_gbps", path));
  m.fp32_gflops_per_core = measurement(field(file, "fp32_gflops_per_core", path), "fp32_gflops_per_core", path);
  m.fp32_method = text_field(file, "fp32_method", path);
  m.int8_gops_per_core = measurement(field(file, "int8_gops_per_core", path), "int8_gops_per_core", path);
  m.int8_method = text_field(file, "int8_method", path);
  return m;
}

std::string default_limits_path() { return kiln_cache_path("machine.json"); }

}  // namespace kiln
