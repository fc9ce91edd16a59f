// Identifies the CUDA stack in a finished graph: the driver (real or stub), the CUDA runtime
// and libraries, cuDNN, each with its version and where that version was read, and what the
// application objects require of them. The CUDA checks and the no-file audit start from this.
#pragma once

#include <map>
#include <tuple>

#include <optional>
#include <string>
#include <vector>

#include "analyzer/check/check.h"
#include "matrix/matrix.h"

namespace depscan {

struct CudaLibrary {
  size_t object = 0;             // index into Graph::objects
  std::string component;         // driver, cudart, cublas, cublasLt, cufft, cusparse, cusolver,
                                 // curand, nvrtc, nvrtc-builtins, nvjitlink, nccl, cupti, cudnn
  std::string name;              // SONAME, or the file name when there is none
  std::optional<Version> version;
  std::string version_source;    // "file name libcudart.so.12.4.127", "cudnn_version.h at ...", ...
  std::vector<int> cuda_majors;  // CUDA majors the file belongs to / was built for
  std::string cuda_source;       // how cuda_majors was decided
  int cudnn_major = 0;           // cuDNN libraries: the series (8, 9)
  bool cudnn_shim = false;       // libcudnn.so.N itself
  bool stub = false;             // the toolkit's stub libcuda (lib64/stubs), never the real driver
};

// Something an application object asks of the CUDA stack.
struct CudaRequirement {
  size_t object = 0;             // the requiring object
  std::string component;         // cudart, cudnn, ...
  std::string what;              // "NEEDED libcudart.so.12", "symbol cudaMalloc@libcudart.so.12", ...
  std::optional<int> cuda_major; // the CUDA major it implies, if any
  std::optional<int> cudnn_major;
};

struct SourcedVersion {
  Version version;
  std::string source;            // "--driver", "/proc/driver/nvidia/version", "cudnn_version.h at ..."
};

struct CudaStack {
  std::vector<CudaLibrary> libraries;       // every CUDA/cuDNN object of the graph, graph order
  std::vector<CudaRequirement> requirements;
  std::optional<SourcedVersion> driver;      // the installed driver, when it can be told
  std::optional<SourcedVersion> kernel_driver;  // the kernel module's (/proc/driver/nvidia/version), unless --driver
  bool driver_searched = false;             // some object opens libcuda.so.1

  bool empty() const { return libraries.empty() && requirements.empty(); }
  std::vector<const CudaLibrary*> of(std::string_view component) const;
  const CudaLibrary* for_object(size_t object) const;
};

CudaStack identify_cuda_stack(const CheckContext& ctx);

// ---- pieces the dlopen stage and the checks share

// The version in a file name after ".so.": "libcudart.so.12.4.127" -> 12.4.127, with at least
// `min_parts` components; nullopt otherwise.
std::optional<Version> version_from_file_name(std::string_view file_name, size_t min_parts = 1);

// The installed NVIDIA driver version from /proc/driver/nvidia/version or
// /sys/module/nvidia/version of the analysed root.
std::optional<SourcedVersion> driver_version_from_system(const FileSystem& fs);

// The first whitespace-separated N.N or N.N.N of /proc/driver/nvidia/version's first line.
std::optional<Version> parse_nvidia_version_text(std::string_view text);

// The first "cu10".."cu19" in `text` with `before` and `after` around it: its CUDA major and
// the matched text ("cu12" in nvidia-cudnn-cu12; "/cu13/lib" in a RUNPATH).
std::optional<std::pair<int, std::string_view>> cu_major_in(std::string_view text, std::string_view before,
                                                            std::string_view after);

// The CUDA major (10-19) a Python distribution's name, in any spelling, says it was built for: a
// "-cu12", "-cu124", "-cuda12", "-cuda120" or "-cuda12x" part (nvidia-cublas-cu12, spconv-cu124,
// jax-cuda12-plugin, nvidia-dali-cuda120, cupy-cuda13x).
std::optional<int> cuda_major_of_distribution(std::string_view name);

// CUDNN_MAJOR/MINOR/PATCHLEVEL from cudnn_version.h (or cudnn_version_vN.h, cudnn.h) found
// beside a library directory: <dir>/../include, <dir>/../../include, /usr/include.
std::optional<SourcedVersion> cudnn_header_version(const FileSystem& fs, const std::string& library_dir, int major);

// The header versions (cuDNN's, and CUDART_VERSION from cuda_runtime_api.h) of a scan, each
// header directory read once: a scan asks again for every CUDA library of every root.
class HeaderVersions {
 public:
  explicit HeaderVersions(const FileSystem& fs) : fs_(fs) {}
  std::optional<SourcedVersion> cudnn(const std::string& library_dir, int major);
  std::optional<SourcedVersion> cudart(const std::string& library_dir, int major);

 private:
  const FileSystem& fs_;
  std::map<std::tuple<bool, std::string, int>, std::optional<SourcedVersion>> memo_;  // (cudnn?, dir, major)
};

// A stub libcuda: under a "stubs" directory, or SONAME libcuda.so.1 with no DT_NEEDED at all
// and a tiny .text (the real driver links libc, libm, libdl, ... and is tens of MB).
bool is_stub_driver(const Object& object);

}  // namespace depscan
