// Lists the CUDA device code embedded in an ELF file (or held in a raw .fatbin file): every
// fatbin container (magic 0xBA55ED50) in the .nv_fatbin and __nv_relfatbin sections, entry
// headers only (nothing is decompressed).
// Layout: ../shared/reference/fatbin.md. Without a section table the whole file is scanned for
// the magic and only hits that parse as containers are kept. Every read is bounds-checked;
// a malformed container becomes one line in CudaCode::errors and the walk goes on with the
// next section.
#pragma once

#include <memory>
#include <string_view>

#include "analyzer/input/fs.h"
#include "analyzer/model.h"
#include "analyzer/util/bytes.h"
#include "analyzer/util/expected.h"

namespace depscan {

inline constexpr uint32_t kFatbinMagic = 0xBA55ED50;         // container header
inline constexpr uint32_t kFatbinWrapperMagic = 0x466243B1;  // .nvFatBinSegment wrapper

// The device code in an ELF file or a raw .fatbin (any other bytes give an empty result).
// With scan_read_only_data, a file without fatbin sections also has its .rodata searched for
// containers (modules loaded through the driver API, as libcupti does).
CudaCode read_fatbin(ByteView file, bool scan_read_only_data = false);

// read_fatbin on a file; null when the file holds no device code at all.
Expected<std::shared_ptr<const CudaCode>> read_cuda_code(const FileSystem& fs, std::string_view logical,
                                                         bool scan_read_only_data = false);

// The fatbin stage of run_scan: fills Binary::cuda_code of every ELF object in the graph.
// Reads only section headers of files without device code (and .rodata of NVIDIA libraries and
// of objects linked against libcuda or libcudart).
void attach_cuda_code(Graph& graph, const FileSystem& fs);

}  // namespace depscan
