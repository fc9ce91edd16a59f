#include "analyzer/check/python_variants.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analyzer/check/per_file.h"
#include "analyzer/check/torch_build.h"
#include "analyzer/input/fs.h"
#include "matrix/matrix.h"

namespace depscan {
namespace {

// The distribution's builds as its row describes them.
struct Builds {
  std::map<GpuVersion, std::string> cuda;
  std::string cpu;
  std::set<std::string> others;
};

std::optional<GpuVersion> cuda_build_version(std::string_view relative, const std::string& pattern) {
  size_t brace = pattern.find("{version}");
  std::string_view head = std::string_view(pattern).substr(0, brace), tail = std::string_view(pattern).substr(brace + 9);
  if (relative.size() < head.size() + tail.size() + 3 || !relative.starts_with(head) || !relative.ends_with(tail))
    return std::nullopt;
  std::string digits(relative.substr(head.size(), relative.size() - head.size() - tail.size()));
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }) || digits.size() > 6)
    return std::nullopt;
  return GpuVersion{std::stoi(digits.substr(0, 2)), std::stoi(digits.substr(2))};  // CUDA majors have two digits
}

Builds builds_of(const Distribution& d, const PythonVariants& row) {
  Builds out;
  for (const std::string& file : d.files) {
    std::string relative = relative_to_site_packages(d, file);
    if (auto v = cuda_build_version(relative, row.cuda_file)) out.cuda[*v] = file;
    else if (relative == row.cpu_file) out.cpu = file;
    else if (std::any_of(row.others.begin(), row.others.end(), [&](const std::string& g) { return glob_match(g, relative); }))
      out.others.insert(file);
  }
  return out;
}

// exact: torch's version only. same_major_nearest: that, else the newest older minor, else the oldest newer one.
std::optional<GpuVersion> pick(const std::map<GpuVersion, std::string>& cuda, GpuVersion wanted, const std::string& rule) {
  if (cuda.count(wanted)) return wanted;
  if (rule == "exact") return std::nullopt;
  std::optional<GpuVersion> older, newer;
  for (const auto& [v, file] : cuda) {
    if (v.first != wanted.first) continue;
    if (v < wanted) older = v;
    else if (!newer) newer = v;
  }
  return older ? older : newer;
}

class VariantReport {
 public:
  VariantReport(std::vector<Finding>& findings, const Graph& g, const Distribution& d, const PythonVariants& row,
                const TorchBuild& torch)
      : findings_(findings), g_(g), d_(d), row_(row), torch_(torch), builds_(builds_of(d, row)),
        who_(fmt::format("{} {}", d.name, d.version)) {
    for (const auto& [v, file] : builds_.cuda) shipped_.push_back(fmt::format("{}.{}", v.first, v.second));
  }

  void apply() {
    if (builds_.cuda.empty()) return;
    if (!torch_.dist || !torch_.readable() || torch_.other_backend()) return unknown();
    if (!torch_.cuda.value) return loads(builds_.cpu, "torch has no CUDA");
    GpuVersion wanted = *torch_.cuda.value;
    std::optional<GpuVersion> chosen = pick(builds_.cuda, wanted, row_.rule);
    if (!chosen) return missing(wanted);
    std::string why = *chosen == wanted ? "it matches torch.version.cuda"
                                        : fmt::format("no {}.{} build: the nearest of major {}", wanted.first,
                                                      wanted.second, wanted.first);
    if (!builds_.cpu.empty()) why += fmt::format("; where torch sees no GPU it loads {}", basename_of(builds_.cpu));
    loads(builds_.cuda[*chosen], why);
  }

 private:
  void unknown() {
    std::string why = !torch_.dist            ? "torch is not installed"
                      : torch_.other_backend() ? fmt::format("torch {} is a ROCm or XPU build", torch_.dist->version)
                                               : fmt::format("torch {} has no readable torch.version.cuda ({})",
                                                             torch_.dist->version,
                                                             torch_.version_file.empty() ? "no torch/version.py"
                                                                                         : torch_.version_file);
    info("", fmt::format("{} loads one of its builds for CUDA {} by torch.version.cuda; {}, so each build is checked "
                         "as if it were the one loaded", who_, fmt::join(shipped_, ", "), why));
  }

  // `file` empty: a CPU torch and no CPU build, so no native library is loaded.
  void loads(const std::string& file, const std::string& why) {
    std::string loaded = file.empty() ? "no native library" : basename_of(file);
    lower_all_but(file, fmt::format("; {} loads {} for {}", who_, loaded, torch_.named()));
    info(file, fmt::format("{} loads {} of its builds (CUDA {}) for {}: {}; the other builds' errors are warnings", who_,
                           loaded, fmt::join(shipped_, ", "), torch_.named(), why));
  }

  void missing(GpuVersion wanted) {
    std::string file = basename_of(fmt::format("{}{}{}{}", row_.cuda_file.substr(0, row_.cuda_file.find("{version}")),
                                               wanted.first, wanted.second,
                                               row_.cuda_file.substr(row_.cuda_file.find("{version}") + 9)));
    std::string what = row_.rule == "exact" ? fmt::format("no {}.{} build", wanted.first, wanted.second)
                                            : fmt::format("none of CUDA {}", wanted.first);
    findings_.push_back(Finding{"python-variant-missing", Severity::Error, std::nullopt,
        fmt::format("{} ships CUDA builds for {} and {}, which {} is built for: where torch sees a GPU, its import "
                    "cannot load {} (it is not shipped), and every call into its native code fails",
                    who_, fmt::join(shipped_, ", "), what, torch_.named(), file),
        fmt::format("install a {} release with a CUDA {}.{} build, or a torch built for CUDA {}; or set {} to a "
                    "shipped build the machine can run", d_.name, wanted.first, wanted.second, fmt::join(shipped_, " or "),
                    row_.override_variable), ""});
    lower_all_but("", fmt::format("; {} loads none of its CUDA builds for {}", who_, torch_.named()));
  }

  // `head`: "; bitsandbytes 0.50.2 loads X for torch ..."; each build not loaded says when it would be.
  void lower_all_but(const std::string& loaded, const std::string& head) {
    for (const auto& [v, build] : builds_.cuda)
      if (build != loaded)
        lower(build, torch_.cuda.value
                         ? fmt::format("{}, so this build is loaded only with a torch built for CUDA {}.{} or when "
                                       "{}={}{} asks for it", head, v.first, v.second, row_.override_variable, v.first, v.second)
                         : head + ", so this build is loaded only with a CUDA build of torch");
    if (!builds_.cpu.empty() && builds_.cpu != loaded) lower(builds_.cpu, head + ", so this build is loaded only where torch sees no GPU");
    for (const std::string& other : builds_.others) lower(other, head + ", so this build is loaded only with a ROCm or XPU build of torch");
  }

  void lower(const std::string& file, const std::string& note) {
    for (Finding& f : findings_)
      if (f.severity == Severity::Error && finding_is_about(f, g_, file)) {
        f.severity = Severity::Warning;
        f.message += note;
      }
  }

  void info(const std::string& path, std::string message) {
    findings_.push_back(Finding{"python-variant", Severity::Info, std::nullopt, std::move(message), "", path});
  }

  std::vector<Finding>& findings_;
  const Graph& g_;
  const Distribution& d_;
  const PythonVariants& row_;
  const TorchBuild& torch_;
  Builds builds_;
  std::string who_;
  std::vector<std::string> shipped_;
};

}  // namespace

void apply_python_variants(std::vector<Finding>& findings, const CheckContext& ctx,
                           const std::vector<Distribution>& dists) {
  for (const Distribution& d : dists) {
    const PythonVariants* row = ctx.matrix.python_variants_for(normalize_dist_name(d.name), d.version);
    if (!row) continue;
    TorchBuild torch = torch_build(torch_for(dists, d), ctx.fs);
    VariantReport(findings, ctx.graph, d, *row, torch).apply();
  }
}

}  // namespace depscan
