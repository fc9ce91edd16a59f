// The installed cuDNN's own numbers, from /usr/local/cuda/include/cudnn_version.h: what tests on the
// real cuDNN compare depscan's answers with, instead of constants copied from its output.
#pragma once

#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace depscan::test {

inline constexpr const char* kInstalledCudnnHeader = "/usr/local/cuda/include/cudnn_version.h";

// `#define NAME NUMBER` lines of the header (empty when it is missing).
inline std::map<std::string, int> installed_cudnn_defines() {
  std::map<std::string, int> defines;
  std::ifstream in(kInstalledCudnnHeader);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string directive, name;
    int value = 0;
    if (words >> directive >> name >> value && directive == "#define") defines[name] = value;
  }
  return defines;
}

struct InstalledCudnn {
  int version = 0;     // CUDNN_VERSION: major * 10000 + minor * 100 + patch
  std::string dotted;  // "9.19.0"
  int max_device = 0;  // CUDNN_MAX_DEVICE_VERSION: sm major * 100 + minor * 10
};

inline InstalledCudnn installed_cudnn() {
  auto d = installed_cudnn_defines();
  InstalledCudnn c;
  c.version = d["CUDNN_MAJOR"] * 10000 + d["CUDNN_MINOR"] * 100 + d["CUDNN_PATCHLEVEL"];
  c.dotted = std::to_string(d["CUDNN_MAJOR"]) + "." + std::to_string(d["CUDNN_MINOR"]) + "." + std::to_string(d["CUDNN_PATCHLEVEL"]);
  c.max_device = d["CUDNN_MAX_SM_MAJOR_NUMBER"] * 100 + d["CUDNN_MAX_SM_MINOR_NUMBER"] * 10;
  return c;
}

}  // namespace depscan::test
