#include "analyzer/check/cuda_install_hint.h"

#include <algorithm>

#include <fmt/format.h>

#include "analyzer/check/cuda_stack.h"

namespace depscan {
namespace {

std::string driver_hint(std::string_view name) {
  return fmt::format("{} comes with the NVIDIA driver, not with the CUDA toolkit or pip: install the driver on the "
                     "target (in a container, start it with the NVIDIA Container Toolkit, e.g. `docker run --gpus all`, "
                     "which mounts the host's driver libraries when NVIDIA_DRIVER_CAPABILITIES selects compute, as it does unless set otherwise); never ship the stub from the toolkit's lib64/stubs",
                     name);
}

// "nvidia-cudnn-cu12==9.* (CUDA 12) or nvidia-cudnn-cu13==9.* (CUDA 13)"
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

// Whether the component's pip packages hold different SONAMEs in different releases (TensorRT).
bool pins_releases(const ComponentRow& component) {
  return std::any_of(component.sonames.begin(), component.sonames.end(),
                     [](const ComponentSoname& s) { return !s.pip_version.empty(); });
}

// The majors the process shows, where they are among the name's own; else the name's.
std::vector<int> narrowed(const std::vector<int>& own, const std::vector<int>& process) {
  std::vector<int> both;
  for (int m : process)
    if (own.empty() || std::find(own.begin(), own.end(), m) != own.end()) both.push_back(m);
  return both.empty() ? own : both;
}

}  // namespace

std::vector<std::vector<int>> cuda_majors_by_root(const Graph& graph, const Matrix& matrix) {
  std::vector<std::vector<int>> out(graph.roots.size());
  auto add = [](std::vector<int>& seen, int major) {
    if (std::find(seen.begin(), seen.end(), major) == seen.end()) seen.push_back(major);
  };
  // Names guessed from read-only data (a fallback, a message) count only for a root whose other
  // names show no major: TensorFlow opens every CUDA library by a name in its strings.
  std::vector<bool> known(graph.roots.size(), false);  // by the names that are not guesses
  for (bool guessed : {false, true}) {
    for (const Edge& e : graph.edges) {
      if (e.root >= out.size() || e.inferred != guessed || (guessed && known[e.root])) continue;
      std::vector<int> majors = matrix.cuda_majors_of(e.name);
      if (majors.size() == 1) add(out[e.root], majors.front());
    }
    for (size_t r = 0; r < out.size(); ++r) known[r] = !out[r].empty();
  }
  for (size_t r = 0; r < out.size(); ++r) {  // tensorrt-cu12-bindings and cupy-cuda12x are built for CUDA 12
    if (graph.roots[r] >= graph.objects.size()) continue;
    if (auto major = cuda_major_of_distribution(graph.objects[graph.roots[r]].owner)) add(out[r], *major);
  }
  for (auto& majors : out) std::sort(majors.begin(), majors.end());
  return out;
}

const std::vector<int>& cuda_majors_of_root(std::vector<std::vector<int>>& by_root, const Graph& graph,
                                            const Matrix& matrix, size_t root) {
  static const std::vector<int> none;
  if (by_root.empty()) by_root = cuda_majors_by_root(graph, matrix);
  return root < by_root.size() ? by_root[root] : none;
}

std::optional<std::string> cuda_install_hint(const Matrix& matrix, std::string_view name, std::string_view importer,
                                             const std::vector<int>& process_majors) {
  if (const CudnnSeries* series = matrix.cudnn_series_of(name)) {
    std::vector<int> majors = narrowed(cudnn_cuda_majors(matrix, series->major), process_majors);
    std::string cuda = majors.size() == 1 ? fmt::format("CUDA {}", majors.front()) : "the application's CUDA major";
    return install_text(name, fmt::format("part of cuDNN {}", series->major),
                        pip_choices(matrix.pip_packages_of("cudnn", majors), fmt::format("=={}.*", series->major)),
                        fmt::format("install cuDNN {} for {} from NVIDIA", series->major, cuda), importer);
  }
  const ComponentRow* component = matrix.component_of(name);
  if (!component) return std::nullopt;
  if (component->component == "driver") return driver_hint(name);
  std::vector<int> majors = narrowed(matrix.cuda_majors_of(name), process_majors);
  auto packages = matrix.pip_packages_of(component->component, majors);
  if (!component->product.empty()) {  // NCCL, cuTENSOR, TensorRT: NVIDIA libraries with downloads of their own
    const ComponentSoname* entry = matrix.soname_of(name);
    std::string release = entry && !entry->pip_version.empty() ? entry->pip_version : "";
    std::string product = release.empty() ? component->product
                                          : fmt::format("{} {}", component->product, release.substr(0, release.find('.')));
    if (!entry && pins_releases(*component))  // libnvinfer.so.8: no listed package ships it
      return install_text(name, fmt::format("part of {}", product), "",
                          fmt::format("install a {} release that ships {} from NVIDIA", product, name), importer);
    return install_text(name, fmt::format("part of {}", product),
                        pip_choices(packages, release.empty() ? "" : "==" + release),
                        fmt::format("install {} from NVIDIA", product), importer);
  }
  std::string toolkit = majors.empty() ? "the CUDA toolkit" : fmt::format("the CUDA {} toolkit", majors_text(majors));
  return install_text(name, fmt::format("CUDA's {} library", component->component), pip_choices(packages, ""),
                      "install " + toolkit, importer);
}

}  // namespace depscan
