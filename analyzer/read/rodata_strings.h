// Library names a binary keeps in its read-only data: the strings it may pass to dlopen
// ("libcudnn.so.9", "libnvrtc-builtins.so.13.0"). Only .rodata is scanned (bounded), through a
// read-only map of the file; nothing is copied but the names found.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/input/fs.h"
#include "analyzer/model.h"
#include "analyzer/util/bytes.h"
#include "analyzer/util/expected.h"

namespace depscan {

inline constexpr size_t kMaxRodataScan = size_t{96} << 20;  // 96 MiB: cuBLASLt's is 46 MiB

// Whole NUL-terminated strings of `bytes` that are library file names: "lib" + name characters
// + ".so" + optional ".<digits or %d>" parts, as they appear (duplicates removed, in order).
std::vector<std::string> library_names_in(ByteView bytes);

// Bytes in the .rodata section (0 without one).
uint64_t rodata_size(const Binary& binary);

// library_names_in() over the .rodata section of an ELF binary (the first kMaxRodataScan bytes).
// Empty when the binary has no .rodata; an error only when the file cannot be mapped.
Expected<std::vector<std::string>> rodata_library_names(const FileSystem& fs, const Binary& binary);

}  // namespace depscan
