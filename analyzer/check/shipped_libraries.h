// The shared libraries the installed distributions of an audit ship, by file name: what another
// wheel of the same install can provide, even where the loader does not look for it.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/check/check.h"
#include "analyzer/input/distribution.h"
#include "analyzer/input/file_owners.h"
#include "analyzer/model.h"
#include "matrix/matrix.h"

namespace depscan {

class ShippedLibraries {
 public:
  struct Shipped {
    const Distribution* distribution;
    std::string path;  // logical path of the file
  };

  // `owners` (optional) tells which distribution an object belongs to; both must outlive this.
  explicit ShippedLibraries(const std::vector<Distribution>* distributions, const FileOwners* owners = nullptr);

  // The first distribution's file named `name` (libcublas.so.12), or null. With `process_majors`,
  // the first whose wheel is for one of them or for no CUDA major in particular, before the others:
  // a CUDA 13 process's libcurand.so.10 is nvidia-curand's, not nvidia-curand-cu12's.
  const Shipped* find(const std::string& name, const std::vector<int>& process_majors = {}) const;
  // The distribution that installed the object, or null (unknown, or no owners given).
  const Distribution* owner_of(const Object& object) const { return owners_ ? owners_->of(object) : nullptr; }
  const std::vector<Distribution>* distributions() const { return distributions_; }

 private:
  const std::vector<Distribution>* distributions_ = nullptr;
  std::map<std::string, std::vector<Shipped>, std::less<>> by_name_;
  const FileOwners* owners_ = nullptr;
};

// The file named `name` that ctx.shipped lists, or null (no install, or no distribution ships it).
const ShippedLibraries::Shipped* shipped_library(const CheckContext& ctx, const std::string& name,
                                                 const std::vector<int>& process_majors = {});

// The python_preloads row saying the shipping distribution's own Python code loads this file by its
// path before the modules that need it are imported (RAPIDS' load_library()), or null.
const PythonPreload* python_preload_of(const CheckContext& ctx, const ShippedLibraries::Shipped& shipped);

// What the Python package of a root module loads before importing it (matrix loaded_first).
struct PackageLoadsFirst {
  const Distribution* distribution;  // the module's: cupy-cuda12x 13.6.0
  const LoadedFirst* row;
};

// Where a loaded_first row's library comes from when the row names a distribution: the first of that
// name on the module's sys.path (what importlib.metadata finds), and whether the package takes its copy
// (a recent enough release). None when a copy from any distribution will do.
struct AskedDistribution {
  const Distribution* first = nullptr;  // null: none installed there
  bool taken = false;
};
std::optional<AskedDistribution> asked_distribution(const LoadedFirstLibrary& library, const Distribution& module,
                                                    const std::vector<Distribution>& distributions);

// The loaded_first row of the root's own distribution and release, when the matrix has one.
std::optional<PackageLoadsFirst> package_loads_first(const CheckContext& ctx, size_t root);

// Appended to a library-not-found message when the module's package is known not to load the
// file first: "; cutensor-cu12 2.8.1 installs it at P, where the loader does not look, and
// cupy-cuda12x 14.2.0 loads only libcublasLt.so.12, libcutensor.so.2 before this module (<by>):
// <what> fails unless Python code that ran earlier has loaded that file". When the row takes the file
// only from a distribution (CuPy 13), <by> goes on: ", which takes it only from nvidia-nccl-cu11 2.x,
// at least 2.16.5, and finds nvidia-nccl-cu11 2.14.3 in P first".
std::string not_loaded_first_note(const CheckContext& ctx, const ShippedLibraries::Shipped& shipped,
                                  const PackageLoadsFirst& package, size_t root, std::string_view what);

// The CUDA major the shipping wheel is for (nvidia-curand-cu12, or nvidia-curand's nvidia/cu13/lib)
// when the process's majors (cuda_majors_of_root) are known and do not include it.
std::optional<int> shipped_for_other_major(const ShippedLibraries::Shipped& shipped, const std::vector<int>& process_majors);

// The same for a copy of `name` the process asks for: only a name CUDA majors share
// (libcurand.so.10, libcudnn.so.9) can be another major's; libnvrtc.so.12 says which it wants.
std::optional<int> copy_for_other_major(const Matrix& matrix, const std::string& name,
                                        const ShippedLibraries::Shipped& shipped, const std::vector<int>& process_majors);

// Appended to the message then: "; nvidia-curand-cu12 10.3.10.19 installs a libcurand.so.10 at P,
// but for CUDA 12, and the process's other CUDA libraries are CUDA 13".
std::string other_major_note(const ShippedLibraries::Shipped& shipped, int shipped_major,
                             const std::vector<int>& process_majors);

// Appended to a library-not-found message: "; nvidia-cuda-nvrtc-cu12 12.8.93 installs it at P,
// where the loader does not look: <what> works only when ...". `what`: "the import", "the dlopen".
// When the requester's own package has a call that loads the file (matrix preload_calls), the note
// names it instead: "as onnxruntime.preload_dlls() does when the application calls it".
std::string shipped_note(const CheckContext& ctx, const ShippedLibraries::Shipped& shipped, std::string_view what,
                         const Object& requester);

// "load P before <before> (ctypes.CDLL), or add its directory to <requester>'s RUNPATH or LD_LIBRARY_PATH",
// led by the call that loads P when the requester's own package has one (matrix preload_calls):
// "call onnxruntime.preload_dlls() ...: onnxruntime-gpu 1.31.1 then loads P by its path; or load P ...".
std::string shipped_fix(const CheckContext& ctx, const ShippedLibraries::Shipped& shipped, std::string_view before,
                        const Object& requester);

}  // namespace depscan
