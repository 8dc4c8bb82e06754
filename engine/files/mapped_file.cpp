#include "engine/files/mapped_file.hpp"

#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/error/error.hpp"

namespace kiln {

namespace {

// Where the bytes lie in the file they were loaded from, if they were.
struct FilePlace {
  std::string path;  // "" if not found
  uint64_t end = 0;  // the file offset just past the bytes
};

// The file the running program was started from (dl_iterate_phdr gives it no name).
std::string program_file() {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? std::string(path, static_cast<size_t>(n)) : "/proc/self/exe";
}

}  // namespace

void check_mapped_file_holds(std::span<const uint8_t> bytes, const std::string& what) {
  FilePlace place;
  struct Search {
    std::span<const uint8_t> bytes;
    FilePlace* place;
  } search{bytes, &place};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto& s = *static_cast<Search*>(data);
        const auto first = reinterpret_cast<uintptr_t>(s.bytes.data());
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& segment = info->dlpi_phdr[i];
          const uintptr_t start = info->dlpi_addr + segment.p_vaddr;
          if (segment.p_type != PT_LOAD || first < start || first >= start + segment.p_filesz) continue;
          s.place->path = info->dlpi_name[0] != '\0' ? info->dlpi_name : program_file();
          s.place->end = segment.p_offset + (first - start) + s.bytes.size();
          return 1;
        }
        return 0;
      },
      &search);
  if (place.path.empty()) return;
  struct stat st {};
  if (stat(place.path.c_str(), &st) != 0) return;  // gone or renamed: nothing to compare with
  if (static_cast<uint64_t>(st.st_size) < place.end)
    throw Error(what + ": " + place.path + " is cut short: it has " + std::to_string(st.st_size) + " bytes, " +
                std::to_string(place.end) + " are needed (copy it again)");
}

}  // namespace kiln
