// What the static analysis predicts the probe will see: which cuDNN file the application's
// dlopen name resolves to, its sub-libraries, the driver, the CUDA runtime major, and the
// static findings the verdicts are compared with. Computed with the same Resolver as the scan.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyzer/scan/scan.h"

namespace depscan {

struct PredictedLibrary {
  std::string name;                 // the name dlopen/NEEDED asks for
  std::optional<std::string> path;  // canonical file the loader should pick; nullopt = not found
  std::string how;                  // rpath, runpath, ld_so_cache, ... (to_string(How))
};

struct Prediction {
  std::string subject;                           // the application, or "this machine's stack"
  bool local_stack = false;                      // no input: cuDNN is optional, not required
  std::string root;                              // the object whose search rules apply
  std::vector<std::string> cudnn_names;          // names the probe dlopens, in order
  std::optional<PredictedLibrary> cudnn;         // absent: the resolver made no prediction
  int cudnn_major = 0;                           // from the name (libcudnn.so.9 -> 9)
  std::optional<SourcedVersion> cudnn_version;   // the predicted file's name, else the headers beside it
  std::vector<PredictedLibrary> sublibraries;
  std::optional<PredictedLibrary> driver;
  std::optional<int> cudart_major;               // the application's CUDA runtime major
  std::optional<int> cudnn_cuda_major;           // the CUDA major the scan says the cuDNN install opens
  std::string cudnn_cuda_evidence;               // "libcudnn_adv.so.9 opens libcublasLt.so.13"
  bool driver_too_old = false;                   // the scan reported cuda-driver-too-old
  std::vector<std::string> graph_objects;        // canonical paths of every object the graph predicts
  // Search directories the application's own RPATH/RUNPATH contributes; the probe cannot carry
  // them (it is another executable), so they go before / after its LD_LIBRARY_PATH.
  std::vector<std::string> dirs_before_ld_library_path, dirs_after_ld_library_path;
};

// cuDNN's sub-libraries for a major, as the 8.x and 9.x shims open them.
std::vector<std::string> cudnn_sublibrary_names(int major);
bool is_stub_driver_path(const std::string& path);
std::string canonical_or_same(const std::string& path);

Prediction predict(const ScanOptions& options, const ScanReport& report, const std::string& self_exe);

}  // namespace depscan
