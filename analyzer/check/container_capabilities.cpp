#include "analyzer/check/container_capabilities.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "analyzer/check/driver_libraries.h"
#include "analyzer/util/listing.h"
#include "analyzer/check/optional_reach.h"

namespace depscan {
namespace {

constexpr const char* kWhoMounts =
    "docker run --gpus (the NVIDIA Container Toolkit's legacy hook; where --gpus or the runtime uses CDI, every driver "
    "library is mounted)";

// Who asks for one driver library the hook leaves out, and whether any of them fails without it.
struct Unmounted {
  const DriverCapability* capability = nullptr;
  bool list_mounted = false;    // the 64-bit copies of its list are mounted
  bool needs_compat32 = false;  // a 32-bit object asks for it, and compat32 is not selected
  std::vector<std::string> askers;
  bool fails = false;  // a NEEDED entry of an object the process needs, or a dlopen it cannot do without
};

std::string setting_text(const ImageEnvironment& env) {
  if (!env.driver_capabilities) return "NVIDIA_DRIVER_CAPABILITIES is unset, so the hook selects";
  if (env.driver_capabilities->empty()) return "NVIDIA_DRIVER_CAPABILITIES is empty, so the hook selects";
  return fmt::format("NVIDIA_DRIVER_CAPABILITIES=\"{}\" selects", shortened(*env.driver_capabilities));
}

std::string asker_text(const Graph& g, const Edge& e) {
  const std::string& path = g.objects[e.from].path;
  if (e.kind == EdgeKind::Dlopen && e.name.find('/') != std::string::npos) return path + " (dlopen of " + e.name + ")";
  if (e.kind == EdgeKind::Dlopen) return path + " (dlopen)";
  return e.kind == EdgeKind::Preload ? path + " (preload)" : path;
}

// The loader skips a preload it cannot open; a failed dlopen of a name guessed from strings, or
// of one the matrix marks optional, and a library needed only by what such a dlopen opens, may be
// survivable.
bool fails_without(const Graph& g, const Matrix& matrix, OptionalReach& optional, const Edge& e) {
  if (e.kind == EdgeKind::Preload || optional.via(e.root, e.from)) return false;
  return e.kind != EdgeKind::Dlopen ||
         (!e.inferred && !matrix.dlopen_is_optional(soname_or_file_name(g.objects[e.from]), e.name));
}

std::map<std::string, Unmounted> unmounted_libraries(const Graph& g, const Matrix& matrix, const DriverLibraries& table,
                                                     const SelectedCapabilities& selected) {
  std::map<std::string, Unmounted> out;
  OptionalReach optional(g, matrix);
  for (const Edge& e : g.edges) {
    if (e.to) continue;  // the image holds a copy of its own (a cuda-compat libcuda)
    const DriverCapability* capability = table.capability_of(e.name);
    if (!capability) continue;
    // the 32-bit copies come only with compat32 (libnvidia-container's libs32)
    const Object& asker_object = g.objects[e.from];
    bool wide = !asker_object.binary || asker_object.binary->bits != 32;
    bool list_mounted = selected.mounts(capability->name);
    bool needs_compat32 = !wide && !selected.selects("compat32");
    if (list_mounted && !needs_compat32) continue;
    // one finding per library, whether asked for by name or opened by its path
    Unmounted& u = out[e.name.substr(e.name.find_last_of('/') + 1)];
    u.capability = capability;
    u.list_mounted = list_mounted;
    u.needs_compat32 = u.needs_compat32 || needs_compat32;
    std::string asker = asker_text(g, e);
    if (std::find(u.askers.begin(), u.askers.end(), asker) == u.askers.end()) u.askers.push_back(std::move(asker));
    u.fails = u.fails || fails_without(g, matrix, optional, e);
  }
  return out;
}

// The selected capabilities and those of every library left out: what the image should ask for.
std::string with_capabilities_of(const DriverLibraries& table, std::vector<std::string> names,
                                  const std::map<std::string, Unmounted>& unmounted) {
  auto add = [&](const std::string& name) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  };
  for (const DriverCapability& c : table.capabilities)
    for (const auto& [library, u] : unmounted)
      if (u.capability == &c) {
        if (!u.list_mounted) add(c.name);
        if (u.needs_compat32) add("compat32");
      }
  return fmt::format("{}", fmt::join(names, ","));
}

std::string to_add(const Unmounted& u) {
  if (u.list_mounted) return "compat32";
  return u.needs_compat32 ? u.capability->name + " and compat32" : u.capability->name;
}

Finding capability_finding(Severity severity, const std::string& image, std::string message, std::string fix) {
  Finding f{"container-driver-capabilities", severity, std::nullopt, {}, std::move(fix), image};
  f.message = fmt::format("{}: {}", image, message);
  return f;
}

}  // namespace

std::vector<Finding> check_container_capabilities(const Graph& g, const Matrix& matrix, const ImageEnvironment& env,
                                                  const std::string& image) {
  const auto& table = load_driver_libraries();
  if (!env.config_read || !table) return {};
  SelectedCapabilities selected = selected_capabilities(*table, env.driver_capabilities, env.legacy_cuda_image);
  if (!selected.unknown.empty())
    return {capability_finding(
        Severity::Error, image,
        fmt::format("{} refuses to start a GPU container of this image: NVIDIA_DRIVER_CAPABILITIES=\"{}\" names {}, "
                    "which it does not support (\"unsupported capabilities found\")",
                    kWhoMounts, shortened(env.driver_capabilities.value_or("")), shortened(join_limited(selected.unknown))),
        fmt::format("list only {} (comma-separated), or all", join_limited(table->supported, table->supported.size())))};
  std::vector<Finding> out;
  auto unmounted = unmounted_libraries(g, matrix, *table, selected);
  std::string names = fmt::format("{}", fmt::join(selected.names, ","));
  std::string wanted = with_capabilities_of(*table, selected.names, unmounted);
  for (const auto& [name, u] : unmounted) {
    bool cuda = u.capability->name == "compute";
    out.push_back(capability_finding(
        u.fails ? Severity::Error : Severity::Warning, image,
        fmt::format("{} does not mount {}{} into a container of this image: it is one of the driver's {} libraries ({}), "
                    "and {} {}{}{} (needed by {})",
                    kWhoMounts, u.list_mounted ? "the 32-bit " : "", name, u.capability->name, u.capability->what,
                    setting_text(env), names.empty() ? "none" : names,
                    u.needs_compat32 ? ", without compat32, which the 32-bit copies need" : "",
                    cuda ? "; without it CUDA calls fail (\"CUDA driver version is insufficient for CUDA runtime version\")" : "",
                    join_limited(u.askers, 4)),
        fmt::format("add {} to the image's capabilities (ENV NVIDIA_DRIVER_CAPABILITIES={}), or start it with "
                    "docker run --gpus all -e NVIDIA_DRIVER_CAPABILITIES={}",
                    to_add(u), wanted, wanted)));
  }
  return out;
}

}  // namespace depscan
