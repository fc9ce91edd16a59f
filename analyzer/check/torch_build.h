// What the installed torch says about its own build: torch.version.cuda, .hip and .xpu, read
// from its torch/version.py. Checks that depend on the CUDA build of torch read it from here.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyzer/input/distribution.h"
#include "analyzer/input/fs.h"

namespace depscan {

using GpuVersion = std::pair<int, int>;  // major, minor

// A `key: Optional[str] = '12.8'` line of torch/version.py.
struct VersionValue {
  bool is_none = false;             // `key = None`: torch has no such backend
  bool quoted = false;              // a string value, readable or not
  std::optional<GpuVersion> value;  // the string as major.minor
};

// What torch.version.cuda, .hip and .xpu return, from the installed torch/version.py.
struct TorchBuild {
  const Distribution* dist = nullptr;
  std::string version_file;
  VersionValue cuda, hip, xpu;

  bool readable() const { return cuda.is_none || cuda.value; }
  bool other_backend() const { return hip.quoted || xpu.quoted; }  // ROCm or XPU: another choice of build
  // "torch 2.9.1 (torch.version.cuda 12.8, site-packages/torch/version.py)"
  std::string named() const;
};

// The value of `key` in the text of a torch/version.py.
VersionValue version_line(const std::string& file_text, std::string_view key);

// The torch installed next to the distribution, else any; null without one.
const Distribution* torch_for(const std::vector<Distribution>& dists, const Distribution& user);

// torch's build as its torch/version.py says; empty values without the file.
TorchBuild torch_build(const Distribution* torch, const FileSystem& fs);

}  // namespace depscan
