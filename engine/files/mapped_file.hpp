// Whether bytes of a loaded program or shared library are still there in its
// file: a copy cut short maps, but reading past its end raises SIGBUS.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace kiln {

// Throws kiln::Error "<what>: <file> is cut short ..." if `bytes` lie in a
// segment that the program or a shared library was loaded from and its file
// ends before they do; reads none of them. Bytes elsewhere (the heap, a
// mapping of another file) are not checked.
void check_mapped_file_holds(std::span<const uint8_t> bytes, const std::string& what);

}  // namespace kiln
