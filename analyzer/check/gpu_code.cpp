// GPU code: can the device code embedded in each object run on the target GPUs (--gpu)?
// Rules (reference/fatbin.md part 2): SASS sm_XY runs on X.z with z >= Y; sm_XYa only on X.Y;
// sm_XYf like plain; PTX compute_XY JIT-compiles for any capability >= X.Y (compute_XYf within
// family X, compute_XYa only on X.Y) if the driver knows its PTX ISA; SASS is preferred.
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "analyzer/check/gpu_code.h"
#include "analyzer/check/gpu_targets.h"
#include "matrix/matrix.h"

namespace depscan {
namespace {

enum class Verdict { Sass, Jit, JitNeedsNewerDriver, None };  // best first

struct Gpu {
  std::string spec;  // as the user wrote it
  ComputeCapability cc;
};

struct Driver {
  std::optional<std::string> spec;
  std::optional<CudaVersion> cuda;  // newest CUDA version it supports
};

bool arch_fits(const CudaImage& image, ComputeCapability device) {
  ComputeCapability code{static_cast<int>(image.arch / 10), static_cast<int>(image.arch % 10)};
  if (image.variant == 'a') return code == device;
  if (image.kind == CudaImageKind::Sass || image.variant == 'f')
    return code.major == device.major && code.minor <= device.minor;
  if (image.kind == CudaImageKind::Ptx) return code <= device;
  return false;  // unknown kinds are opaque
}

// The driver's JIT accepts PTX up to its own CUDA version; unknown on either side: assume yes. A
// PTX ISA newer than the table needs a CUDA newer than the table's newest.
bool driver_accepts(const CudaImage& ptx, const Driver& driver) {
  if (!driver.cuda) return true;
  if (auto needed = cuda_version_for_ptx_isa(ptx.version_major, ptx.version_minor)) return *needed <= *driver.cuda;
  auto too_old = newest_cuda_before_ptx_isa(ptx.version_major, ptx.version_minor);
  return !too_old || *too_old < *driver.cuda;
}

// What the runtime would use from one kernel module (or a library's union of modules).
struct Judgement {
  Verdict verdict = Verdict::None;
  const CudaImage* image = nullptr;  // the image it would use (the best fitting one)
};

Judgement judge(const std::vector<const CudaImage*>& images, ComputeCapability device, const Driver& driver) {
  Judgement best;
  for (const CudaImage* image : images) {
    if (!arch_fits(*image, device)) continue;
    Verdict v = image->kind == CudaImageKind::Sass ? Verdict::Sass
                : driver_accepts(*image, driver)  ? Verdict::Jit
                                                  : Verdict::JitNeedsNewerDriver;
    if (v < best.verdict || (v == best.verdict && image->arch > best.image->arch)) best = {v, image};
  }
  return best;
}

// The kernel modules of one object, as the runtime loads them.
struct Modules {
  std::vector<std::vector<const CudaImage*>> modules;
  bool library_union = false;              // one module: the union of a vendor library's containers
  std::vector<const CudaImage*> prelink;   // PTX kept only for -rdc linking (__nv_relfatbin)
};

bool is_nvidia_library(const Object& object) {
  std::string_view name = object.realpath.empty() ? object.path : object.realpath;
  name = name.substr(name.rfind('/') + 1);
  for (std::string_view prefix : {"libcu", "libnv", "libnccl", "libnpp"})
    if (name.starts_with(prefix)) return true;
  return false;
}

// A library split into many containers (NVIDIA's are split per architecture) is judged on the
// union of its targets; an application's modules are judged one by one (reference/fatbin.md 0).
constexpr size_t kManyContainers = 8;

Modules modules_of(const Object& object, const CudaCode& code) {
  Modules out;
  std::map<uint32_t, std::vector<const CudaImage*>> by_container, prelinked;
  for (const CudaImage& image : code.images) {
    bool device_link = image.container < code.containers.size() && code.containers[image.container].device_link;
    if (device_link) continue;
    (image.section == "__nv_relfatbin" ? prelinked : by_container)[image.container].push_back(&image);
  }
  if (by_container.empty()) std::swap(by_container, prelinked);  // an -rdc object file: all is pre-link
  for (auto& [container, images] : prelinked)
    for (const CudaImage* image : images)
      if (image->kind == CudaImageKind::Ptx) out.prelink.push_back(image);
  for (auto& [container, images] : by_container) out.modules.push_back(std::move(images));
  const Binary& binary = *object.binary;
  out.library_union = !binary.is_executable() && (is_nvidia_library(object) || out.modules.size() > kManyContainers);
  if (out.library_union && out.modules.size() > 1) {
    std::vector<const CudaImage*> all;
    for (auto& module : out.modules) all.insert(all.end(), module.begin(), module.end());
    out.modules = {std::move(all)};
  }
  return out;
}

std::string listing(const CudaCode& code) { return cuda_code_summary(code); }

std::string ptx_requirement(const Matrix& matrix, const CudaImage& ptx) {
  auto cuda = cuda_version_for_ptx_isa(ptx.version_major, ptx.version_minor);
  if (auto too_old = newest_cuda_before_ptx_isa(ptx.version_major, ptx.version_minor))
    return fmt::format("PTX ISA {}.{}: newer than depscan's PTX table, needs a driver for a CUDA newer than {}",
                       ptx.version_major, ptx.version_minor, too_old->str());
  if (!cuda) return fmt::format("PTX ISA {}.{}", ptx.version_major, ptx.version_minor);
  std::string driver = minimum_driver_for(matrix, *cuda);
  return fmt::format("PTX ISA {}.{}: needs a driver for CUDA {} or newer{}", ptx.version_major, ptx.version_minor,
                     cuda->str(), driver.empty() ? "" : fmt::format(", >= {}", driver));
}

class GpuCodeJudge {
 public:
  GpuCodeJudge(const Matrix& matrix, const Object& object, size_t index, const Driver& driver)
      : matrix_(matrix), object_(object), index_(index), code_(*object.binary->cuda_code), driver_(driver),
        modules_(modules_of(object, code_)) {}

  std::optional<Finding> verdict_for(const Gpu& gpu) const {
    if (modules_.modules.empty()) return std::nullopt;
    std::vector<Judgement> judged;
    for (const auto& module : modules_.modules) judged.push_back(judge(module, gpu.cc, driver_));
    auto worst = std::max_element(judged.begin(), judged.end(),
                                  [](const Judgement& a, const Judgement& b) { return a.verdict < b.verdict; });
    switch (worst->verdict) {
      case Verdict::Sass: return std::nullopt;
      case Verdict::Jit: return jit_only(gpu, *worst->image);
      case Verdict::JitNeedsNewerDriver: return needs_newer_driver(gpu, *worst->image);
      case Verdict::None: break;
    }
    size_t failing = std::count_if(judged.begin(), judged.end(), [](const Judgement& j) { return j.verdict == Verdict::None; });
    if (failing == judged.size()) {
      Judgement prelink = judge(modules_.prelink, gpu.cc, driver_);
      if (prelink.verdict == Verdict::Jit) return prelink_only(gpu, *prelink.image);
    }
    return no_kernel_image(gpu, failing, judged.size());
  }

 private:
  std::string subject(const Gpu& gpu) const {
    std::string gpu_name = gpu.spec == gpu.cc.str() ? "" : fmt::format("{}, ", gpu.spec);
    return fmt::format("{} on GPU {}compute capability {}", object_.path, gpu_name, gpu.cc.str());
  }

  std::string scope() const {
    size_t containers = 0;
    for (const CudaContainer& c : code_.containers) containers += !c.device_link;
    if (modules_.library_union) return fmt::format(" (judged on the union of its {} containers)", containers);
    return "";
  }

  Finding finding(const char* code, Severity severity, std::string message, std::string fix) const {
    return Finding{code, severity, index_, std::move(message), std::move(fix), ""};
  }

  Finding no_kernel_image(const Gpu& gpu, size_t failing, size_t modules) const {
    std::string which = failing == modules ? "no kernel image"
                                           : fmt::format("no kernel image for {} of its {} kernel modules", failing, modules);
    return finding("no-kernel-image", Severity::Error,
                   fmt::format("{}: {}{}; it has {}. Kernel launches fail with \"no kernel image is available for "
                               "execution on the device\" (cudaErrorNoKernelImageForDevice, 209)",
                               subject(gpu), which, scope(), listing(code_)),
                   modules_.library_union
                       ? fmt::format("use a release of this library built for compute capability {}", gpu.cc.str())
                       : fmt::format("use a build that includes sm_{0} (nvcc -gencode arch=compute_{0},code=sm_{0}), "
                                     "or PTX for an older architecture the driver can compile",
                                     gpu.cc.number()));
  }

  Finding jit_only(const Gpu& gpu, const CudaImage& ptx) const {
    return finding("ptx-jit-only", Severity::Warning,
                   fmt::format("{}: no SASS for this GPU{}; the driver must JIT-compile PTX {} at load time ({}); "
                               "it has {}",
                               subject(gpu), scope(), cuda_target_name(ptx), ptx_requirement(matrix_, ptx), listing(code_)),
                   modules_.library_union
                       ? fmt::format("expect a slow first start while the driver compiles; a release of this library "
                                     "with SASS for compute capability {} avoids it",
                                     gpu.cc.str())
                       : fmt::format("add SASS for the GPU (nvcc -gencode arch=compute_{0},code=sm_{0}) to avoid slow "
                                     "first starts and JIT failures",
                                     gpu.cc.number()));
  }

  Finding needs_newer_driver(const Gpu& gpu, const CudaImage& ptx) const {
    auto cuda = cuda_version_for_ptx_isa(ptx.version_major, ptx.version_minor);
    std::string driver_cuda = driver_.cuda ? driver_.cuda->str() : "?";
    std::string floor = cuda ? minimum_driver_for(matrix_, *cuda) : "";
    return finding("ptx-needs-newer-driver", Severity::Warning,
                   fmt::format("{}: only PTX {} (PTX ISA {}.{}) can serve this GPU{}, and driver {} (CUDA {}) is too "
                               "old to JIT-compile it: \"the provided PTX was compiled with an unsupported toolchain\" "
                               "(cudaErrorUnsupportedPtxVersion, 222)",
                               subject(gpu), cuda_target_name(ptx), ptx.version_major, ptx.version_minor, scope(),
                               driver_.spec.value_or("?"), driver_cuda),
                   fmt::format("upgrade the driver{}, or use a build with SASS for sm_{}",
                               floor.empty() ? "" : fmt::format(" to {} or newer (CUDA {})", floor, cuda->str()),
                               gpu.cc.number()));
  }

  Finding prelink_only(const Gpu& gpu, const CudaImage& ptx) const {
    return finding("ptx-jit-only", Severity::Warning,
                   fmt::format("{}: the linked device code has no image for this GPU; JIT possible only via pre-link "
                               "PTX {} in __nv_relfatbin (-rdc build; {}); it has {}",
                               subject(gpu), cuda_target_name(ptx), ptx_requirement(matrix_, ptx), listing(code_)),
                   fmt::format("link the device code for this GPU (nvcc -gencode arch=compute_{0},code=sm_{0})",
                               gpu.cc.number()));
  }

  const Matrix& matrix_;
  const Object& object_;
  size_t index_;
  const CudaCode& code_;
  const Driver& driver_;
  Modules modules_;
};

std::vector<Gpu> target_gpus(const Matrix& matrix, const Target& target, std::vector<Finding>& findings) {
  std::vector<Gpu> gpus;
  for (const std::string& spec : target.gpus) {
    if (auto cc = compute_capability_of(matrix, spec)) {
      gpus.push_back({spec, *cc});
      continue;
    }
    findings.push_back({"unknown-gpu", Severity::Error, std::nullopt,
                        fmt::format("--gpu {}: not a compute capability, sm_ number or known GPU name", spec),
                        "give the compute capability, e.g. --gpu 8.6 or --gpu sm_86", ""});
  }
  return gpus;
}

Finding fatbin_error(size_t index, const Object& object, const std::string& error) {
  return {"fatbin-error", Severity::Warning, index, fmt::format("{}: malformed CUDA fatbin: {}", object.path, error),
          "the embedded GPU code is damaged; rebuild or reinstall the file", ""};
}

}  // namespace

std::vector<Finding> check_gpu_code(const CheckContext& ctx, const std::optional<SourcedVersion>& installed) {
  std::vector<Finding> findings;
  std::vector<Gpu> gpus = target_gpus(ctx.matrix, ctx.target, findings);
  Driver driver;
  if (installed) {
    driver.spec = installed->source == "--driver" ? installed->version.str()
                                                  : fmt::format("{} from {}", installed->version.str(), installed->source);
    driver.cuda = cuda_version_of_driver(ctx.matrix, installed->version.str());
  }
  for (size_t i = 0; i < ctx.graph.objects.size(); ++i) {
    const Object& object = ctx.graph.objects[i];
    if (!object.binary || !object.binary->cuda_code) continue;
    for (const std::string& error : object.binary->cuda_code->errors) findings.push_back(fatbin_error(i, object, error));
    GpuCodeJudge judge(ctx.matrix, object, i, driver);
    for (const Gpu& gpu : gpus)
      if (auto f = judge.verdict_for(gpu)) findings.push_back(std::move(*f));
  }
  return findings;
}

}  // namespace depscan
