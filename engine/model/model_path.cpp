#include "engine/model/model_path.hpp"

#include <cstdlib>
#include <filesystem>

#include "engine/error/error.hpp"

namespace kiln {

namespace {

bool is_file(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

// The folder of /proc/self/exe (Linux), or "" when it cannot be read.
std::string program_folder() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

}  // namespace

std::string resolve_model_path(const char* env_value, const std::string& program_dir, const std::string& file_name,
                               const std::string& build_path) {
  if (env_value != nullptr && *env_value != '\0') {
    if (!is_file(env_value))
      throw Error(std::string(kModelPathVariable) + " names '" + env_value + "', which is not a file");
    return env_value;
  }
  const std::string beside = program_dir.empty() ? std::string() : (std::filesystem::path(program_dir) / file_name).string();
  if (!beside.empty() && is_file(beside)) return beside;
  if (is_file(build_path)) return build_path;
  throw Error("no model file: give one with -m FILE, set " + std::string(kModelPathVariable) + ", or put " + file_name +
              " next to the program" + (program_dir.empty() ? "" : " (in " + program_dir + ")") + "; " + build_path +
              ", the file it was compiled from, is not there either");
}

std::string default_model_path(const std::string& file_name, const std::string& build_path) {
  return resolve_model_path(std::getenv(kModelPathVariable), program_folder(), file_name, build_path);
}

}  // namespace kiln
