// matrix/data/driver-libraries.json: the NVIDIA driver's user-space libraries by driver capability,
// and how the NVIDIA Container Toolkit's hook chooses the capabilities a container gets.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/util/expected.h"

namespace depscan {

// One of libnvidia-container's library lists.
struct DriverCapability {
  std::string name;                   // "compute"
  std::string what;                   // "CUDA and OpenCL"
  std::vector<std::string> prefixes;  // "libcuda.so"
};

struct DriverLibraries {
  std::vector<DriverCapability> capabilities;
  std::vector<std::string> default_set;  // when NVIDIA_DRIVER_CAPABILITIES is unset or empty
  std::vector<std::string> supported;    // every name the hook knows, but "all"
  std::map<std::string, std::vector<std::string>> mounts;  // capability -> the lists it mounts (video: video, compute)

  // The list that holds `name`, a file name or a path (libnvcuvid.so.1: video), or null.
  const DriverCapability* capability_of(std::string_view name) const;
  // The list named `list` ("compute"), or null.
  const DriverCapability* capability_of_list(std::string_view list) const;
};

// Parsed on first use, kept for the rest of the run.
const Expected<DriverLibraries>& load_driver_libraries();

// What the hook selects for an image. `setting` is NVIDIA_DRIVER_CAPABILITIES (nullopt: unset);
// `legacy_image` is CUDA_VERSION set without NVIDIA_REQUIRE_CUDA. `unknown` lists the names the
// hook does not support, which make it refuse the container.
struct SelectedCapabilities {
  std::vector<std::string> names;    // sorted
  std::vector<std::string> unknown;  // in the order written
  std::vector<std::string> mounted;  // the library lists the names mount
  bool mounts(std::string_view library_list) const;
  bool selects(std::string_view capability) const;
};
SelectedCapabilities selected_capabilities(const DriverLibraries& table, const std::optional<std::string>& setting,
                                           bool legacy_image);

}  // namespace depscan
