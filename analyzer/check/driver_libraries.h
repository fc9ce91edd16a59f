// matrix/data/driver-libraries.json: the NVIDIA driver's user-space libraries by driver capability,
// and how the NVIDIA Container Toolkit's hook chooses the capabilities a container gets.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/util/expected.h"

namespace depscan {

struct DriverCapability {
  std::string name;                   // "compute"
  std::string what;                   // "CUDA and OpenCL"
  std::vector<std::string> prefixes;  // "libcuda.so"
};

struct DriverLibraries {
  std::vector<DriverCapability> capabilities;
  std::vector<std::string> default_set;  // when NVIDIA_DRIVER_CAPABILITIES is unset or empty
  std::vector<std::string> supported;    // every name the hook knows, but "all"
  std::string source;

  // The capability whose libraries include `name` (libnvcuvid.so.1: video), or null.
  const DriverCapability* capability_of(std::string_view name) const;
};

// Parsed on first use, kept for the rest of the run.
const Expected<DriverLibraries>& load_driver_libraries();

// What the hook selects for an image. `setting` is NVIDIA_DRIVER_CAPABILITIES (nullopt: unset);
// `legacy_image` is CUDA_VERSION set without NVIDIA_REQUIRE_CUDA. `unknown` lists the names the
// hook does not support, which make it refuse the container.
struct SelectedCapabilities {
  std::vector<std::string> names;  // sorted
  std::vector<std::string> unknown;
  bool has(std::string_view capability) const;
};
SelectedCapabilities selected_capabilities(const DriverLibraries& table, const std::optional<std::string>& setting,
                                           bool legacy_image);

}  // namespace depscan
