// Container image archives, plain or compressed (gzip, xz, zstd, bzip2): `docker save` output
// (manifest.json + layer tars) and OCI image layout archives (index.json, blobs/sha256/...).
// Layers are applied in order into a private directory with their whiteouts (".wh.<name>"
// removes, ".wh..wh..opq" empties a directory);
// links stay inside the image: symlinks are kept as written and resolved inside the image root by
// RootedFs (absolute targets are re-rooted), hard links must name a file of the image.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "analyzer/input/archive.h"
#include "analyzer/model.h"

namespace depscan {

// The NVIDIA Container Toolkit's start-time requirements of an image: every NVIDIA_REQUIRE_*
// variable but NVIDIA_REQUIRE_JETPACK*, and for a legacy image (CUDA_VERSION without
// NVIDIA_REQUIRE_CUDA) "cuda>=major.minor"; none with NVIDIA_DISABLE_REQUIRE true
// (nvidia-container-toolkit internal/config/image/cuda_image.go, GetRequirements).
struct ContainerRequirements {
  std::vector<std::pair<std::string, std::string>> variables;  // {"NVIDIA_REQUIRE_CUDA", "cuda>=12.4 brand=..."}, by name
  bool disabled = false;
  std::string legacy_version_error;  // a legacy image's CUDA_VERSION that the toolkit cannot read as a version
};

// What the image's config (`ENV` and `WORKDIR` in a Dockerfile) sets for the loader of the
// processes a container starts with (unless `docker run -e` or a pod spec changes it): not this
// shell's environment.
struct ImageEnvironment {
  std::string ld_library_path;  // "" when the config sets none
  std::string ld_preload;
  std::string glibc_tunables;
  bool bind_now = false;  // LD_BIND_NOW set to a non-empty value, as glibc reads it
  std::string working_dir = "/";  // config.WorkingDir: where empty and relative LD_LIBRARY_PATH entries point
  bool config_read = false;     // false: the config was missing or unreadable, so nothing is known to be set
  ContainerRequirements requirements;
  std::optional<std::string> driver_capabilities;  // NVIDIA_DRIVER_CAPABILITIES; nullopt when unset
  bool legacy_cuda_image = false;  // CUDA_VERSION without NVIDIA_REQUIRE_CUDA: the hook's "legacy" image
};

struct ImageUnpack {
  bool ok = false;              // a root file system was produced (possibly with findings)
  size_t layers = 0;             // applied in full
  size_t layers_listed = 0;      // in the image's manifest
  ImageEnvironment environment;
  std::vector<Finding> findings;
};

// LD_LIBRARY_PATH, LD_PRELOAD, GLIBC_TUNABLES and the container requirements from an image config's `config.Env`
// ("NAME=value" strings); the last setting of a name wins, as in Docker.
ImageEnvironment environment_of_config(const nlohmann::json& config);

// Whether an archive looks like an image (has manifest.json or index.json at its top).
bool is_image_archive(const std::string& host_path);

// The OCI platform of the machine depscan runs on ("linux/amd64"): the default image platform.
std::string host_image_platform();

// Which image of an archive to unpack. `name` picks one of several saved together (`docker save
// a b`); without it the first is taken, with an `image-several` warning. `platform`
// ("os/arch[/variant]", aliases and default variants as containerd has them) picks the image of an
// image index (a multi-platform image); without it, this machine's, or the only image.
struct ImageChoice {
  std::optional<std::string> platform;
  std::optional<std::string> name;
};

// Unpacks the chosen image in `host_path` into `rootfs` (files) using `staging` (the outer archive).
ImageUnpack unpack_image(const std::string& host_path, const std::string& display, SafeTree& staging,
                         SafeTree& rootfs, const ImageChoice& choice = {}, const ArchiveLimits& limits = {});

}  // namespace depscan
