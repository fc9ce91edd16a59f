#include "analyzer/check/cuda_install_hint.h"

#include <algorithm>

#include <fmt/format.h>

namespace depscan {
namespace {

std::string driver_hint(std::string_view name) {
  return fmt::format("{} comes with the NVIDIA driver, not with the CUDA toolkit or pip: install the driver on the "
                     "target (in a container, start it with the NVIDIA Container Toolkit, e.g. `docker run --gpus all`, "
                     "which mounts the host's driver libraries); never ship the stub from the toolkit's lib64/stubs",
                     name);
}

// "'nvidia-cudnn-cu12==9.*' (CUDA 12) or 'nvidia-cudnn-cu13==9.*' (CUDA 13)"
std::string pip_choices(const std::vector<const PipPackage*>& packages, const std::string& pin) {
  std::vector<std::string> choices;
  for (const PipPackage* p : packages)
    choices.push_back(fmt::format("{}{} (CUDA {})", p->package, pin, p->cuda_major));
  return fmt::format("{}", fmt::join(choices, " or "));
}

std::string majors_text(const std::vector<int>& majors) {
  std::vector<std::string> parts;
  for (int m : majors) parts.push_back(std::to_string(m));
  return fmt::format("{}", fmt::join(parts, "/"));
}

// The CUDA majors any release of a cuDNN series was built for.
std::vector<int> cudnn_cuda_majors(const Matrix& matrix, int series) {
  std::vector<int> majors;
  for (const CudnnRelease* r : matrix.cudnn_releases_matching(Version{{series}}))
    for (int m : r->cuda_majors())
      if (std::find(majors.begin(), majors.end(), m) == majors.end()) majors.push_back(m);
  std::sort(majors.begin(), majors.end());
  return majors;
}

std::string install_text(std::string_view name, std::string_view what, const std::string& pip,
                         const std::string& from_nvidia, std::string_view importer) {
  std::string source = pip.empty() ? from_nvidia : fmt::format("pip install {}, or {}", pip, from_nvidia);
  return fmt::format("{} is {}: {}, then add its lib directory to LD_LIBRARY_PATH or {}'s RUNPATH", name, what,
                     source, importer);
}

}  // namespace

std::optional<std::string> cuda_install_hint(const Matrix& matrix, std::string_view name, std::string_view importer) {
  if (const CudnnSeries* series = matrix.cudnn_series_of(name)) {
    auto packages = matrix.pip_packages_of("cudnn", cudnn_cuda_majors(matrix, series->major));
    return install_text(name, fmt::format("part of cuDNN {}", series->major),
                        pip_choices(packages, fmt::format("=={}.*", series->major)),
                        fmt::format("install cuDNN {} for the application's CUDA major from NVIDIA", series->major),
                        importer);
  }
  const ComponentRow* component = matrix.component_of(name);
  if (!component) return std::nullopt;
  if (component->component == "driver") return driver_hint(name);
  std::vector<int> majors = matrix.cuda_majors_of(name);
  auto packages = matrix.pip_packages_of(component->component, majors);
  std::string toolkit = majors.empty() ? "the CUDA toolkit" : fmt::format("the CUDA {} toolkit", majors_text(majors));
  return install_text(name, fmt::format("CUDA's {} library", component->component), pip_choices(packages, ""),
                      "install " + toolkit, importer);
}

}  // namespace depscan
