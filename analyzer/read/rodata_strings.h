// Library names a binary keeps in its read-only data: the strings it may pass to dlopen
// ("libcudnn.so.9", "libnvrtc-builtins.so.13.0"). Only .rodata is scanned (bounded), through a
// read-only map of the file; nothing is copied but the names found.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
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

// DLL file names in `bytes`: the run of name characters before a ".dll" (any case) that ends a
// NUL-terminated string of 8-bit characters ("nvcuda.dll") or of UTF-16LE ones (what LoadLibraryW
// is passed), as they appear (duplicates removed, in order).
std::vector<std::string> dll_names_in(ByteView bytes);

// The section a binary keeps its read-only data in: ".rodata" (ELF) or ".rdata" (PE).
std::string_view rodata_section_name(const Binary& binary);

// Bytes in the read-only data section (0 without one).
uint64_t rodata_size(const Binary& binary);

// library_names_in() over the .rodata section of an ELF binary, dll_names_in() over the .rdata
// section of a PE file (the first kMaxRodataScan bytes). Empty when the binary has no such
// section; an error only when the file cannot be mapped.
Expected<std::vector<std::string>> rodata_library_names(const FileSystem& fs, const Binary& binary);

// The CUDA libraries a binary built with XLA's lazy-loading stubs opens: the <key> of every
// "tsl/cuda/<key>_stub.cc" source path in `bytes` ("cudart", "cublasLt", "cudnn"), in order, once
// each. Each stub opens its library by name the first time one of its functions is called.
std::vector<std::string> tsl_cuda_stubs_in(ByteView bytes);

// tsl_cuda_stubs_in() over the .rodata section of an ELF binary (the first kMaxRodataScan bytes).
Expected<std::vector<std::string>> rodata_tsl_cuda_stubs(const FileSystem& fs, const Binary& binary);

// Asks for bytes [offset, offset + length) of a scanned range to be read in ahead of the scan.
using ReadAhead = std::function<void(size_t offset, size_t length)>;

// The first whole NUL-terminated string of `bytes` that starts with `prefix`. The search goes a
// megabyte at a time and keeps read_ahead (if any) asked for at least two megabytes past the
// chunk it searches.
std::optional<std::string> first_string_with_prefix(ByteView bytes, std::string_view prefix,
                                                    const ReadAhead& read_ahead = nullptr);

// first_string_with_prefix() over .rodata: it stops at the first hit, where
// rodata_library_names() reads the whole section (NVRTC's is 13 MB; the name it opens is 2.3 MB in).
Expected<std::optional<std::string>> rodata_string_with_prefix(const FileSystem& fs, const Binary& binary,
                                                               std::string_view prefix);

}  // namespace depscan
