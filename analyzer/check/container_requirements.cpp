#include "analyzer/check/container_requirements.h"

#include <algorithm>
#include <optional>
#include <ranges>

#include <fmt/format.h>

#include "analyzer/check/gpu_targets.h"
#include "analyzer/util/listing.h"
#include "analyzer/check/nvidia_require_dsl.h"
#include "analyzer/util/strings.h"
#include "matrix/matrix.h"

namespace depscan {
namespace {

// libnvidia-container's check (src/cli/dsl.c, configure.c), which `docker run --gpus` and the
// toolkit's legacy mode run before a GPU container starts: for each GPU, each variable in turn must
// hold; in a variable, space-separated terms are ORed and comma-separated constraints ANDed, both
// evaluated left to right and stopping once decided; a constraint on a property other than cuda,
// driver, arch or brand, or one it cannot read, is an "invalid expression" when reached. What
// depscan cannot know (an architecture without --gpu) may go either way, so an evaluation yields
// the set of outcomes it can have. The GPU's brand is never known: each brand the requirements
// name (compared ignoring case, as str_case_equal does) and one they do not name are tried in turn.
using Outcomes = unsigned;
constexpr Outcomes kPass = 1, kFail = 2, kInvalid = 4, kEither = kPass | kFail;

struct GpuTarget {
  std::optional<std::string> cuda;    // "12.6": the newest CUDA the target driver runs
  std::optional<std::string> driver;  // "535.104.05"
  std::optional<std::string> arch;    // "8.6": this GPU's compute capability
  std::optional<std::string> brand;   // lower case; nullopt: either way
};

// A version compared with a value depscan does not know: it may hold, or be invalid where dsl.c
// reads a number of it that overflows (the first always, the later ones only when reached).
Outcomes unknown_outcomes(const Constraint& c) {
  if (!compare_dsl_versions("0", c.op, c.value)) return kInvalid;
  for (const std::string& number : split_nonempty(c.value, "."))
    if (!compare_dsl_versions(number, "=", number)) return kPass | kInvalid;
  return kPass;
}

Outcomes constraint(std::string_view text, const GpuTarget& target) {
  auto c = parse_constraint(text);
  if (!c) return kInvalid;
  Outcomes falsity = overflows_error_buffer(*c) ? kInvalid : kFail;
  if (c->property == "brand") {  // a name: equal or not
    if (c->op != "=" && c->op != "!=") return kInvalid;
    if (!target.brand) return kPass | falsity;
    return (ascii_lower(c->value) == *target.brand) == (c->op == "=") ? kPass : falsity;
  }
  const std::optional<std::string>* have = c->property == "cuda" ? &target.cuda : c->property == "driver" ? &target.driver
                                         : c->property == "arch" ? &target.arch : nullptr;
  if (!have) return kInvalid;
  if (!*have) return unknown_outcomes(*c) | falsity;
  auto holds = compare_dsl_versions(**have, c->op, c->value);
  if (!holds) return kInvalid;
  return *holds ? kPass : falsity;
}

// `first` and then, where it passed, `next` (AND); `first` or else, where it failed, `next` (OR).
Outcomes and_then(Outcomes first, Outcomes next) { return (first & ~kPass) | ((first & kPass) ? next : 0); }
Outcomes or_else(Outcomes first, Outcomes next) { return (first & ~kFail) | ((first & kFail) ? next : 0); }

Outcomes term(const std::string& text, const GpuTarget& target) {
  Outcomes out = kPass;
  for (const std::string& factor : split_nonempty(text, ",")) out = and_then(out, constraint(factor, target));
  return out;
}

// An empty variable holds; a term of commas only ends the evaluation with the result so far.
Outcomes variable(const std::string& text, const GpuTarget& target) {
  Outcomes out = kPass;
  bool first = true;
  for (const std::string& alternative : split_nonempty(text, " ")) {
    if (split_nonempty(alternative, ",").empty()) break;
    out = first ? term(alternative, target) : or_else(out, term(alternative, target));
    first = false;
  }
  return out;
}

struct Verdict {
  Outcomes outcomes = kPass;
  std::string failed;  // the first variable that can fail, as NAME="value"
  std::string condition;  // its first term, as libnvidia-container names it
};

// The variable named in a refusal: the first that surely fails, else the first that may.
Verdict evaluate(const ContainerRequirements& requirements, const GpuTarget& target) {
  Verdict v;
  bool sure = false;
  for (const auto& [name, text] : requirements.variables) {
    Outcomes here = variable(text, target);
    bool fails_surely = !(here & kPass);
    if ((v.outcomes & kPass) && (here & ~kPass) && (v.failed.empty() || (fails_surely && !sure))) {
      v.failed = fmt::format("{}=\"{}\"", shortened(name), shortened(text));
      v.condition = shortened(std::string_view(text).substr(0, text.find(' ')));  // dsl.c: up to the first space
      sure = fails_surely;
    }
    v.outcomes = and_then(v.outcomes, here);
    if (!(v.outcomes & kPass)) break;  // refused: the later variables change nothing
  }
  return v;
}

// The brands the requirements compare with, and one they do not name ("\0": no variable holds a
// NUL): the GPU's brand is one of them. Empty, and the brand left undecided, when they name more
// than kMaxBrands or are longer than kMaxBytes (each brand costs an evaluation).
constexpr size_t kMaxBrands = 16;
constexpr size_t kMaxBytes = 64 << 10;

std::vector<std::string> brand_candidates(const ContainerRequirements& requirements) {
  std::vector<std::string> out;
  size_t bytes = 0;
  for (const auto& [name, text] : requirements.variables)
    if ((bytes += text.size()) > kMaxBytes) return {};
  for (const auto& [name, text] : requirements.variables)
    for (const std::string& alternative : split_nonempty(text, " "))
      for (const std::string& factor : split_nonempty(alternative, ",")) {
        auto c = parse_constraint(factor);
        if (!c || c->property != "brand") continue;
        std::string brand = ascii_lower(c->value);
        if (std::find(out.begin(), out.end(), brand) != out.end()) continue;
        if (out.size() == kMaxBrands) return {};
        out.push_back(std::move(brand));
      }
  out.emplace_back(1, '\0');
  return out;
}

// The evaluation for each brand the GPU may have, merged: its outcomes, and the variable named
// from a brand that surely fails, else from one that may; the brand the variables do not name
// (the last) first, as most GPUs have none of the brands a requirement names.
Verdict evaluate_each_brand(const ContainerRequirements& requirements, GpuTarget gpu, const std::vector<std::string>& brands) {
  if (brands.empty()) return evaluate(requirements, gpu);
  Verdict merged;
  merged.outcomes = 0;
  bool sure = false;
  for (const std::string& brand : std::views::reverse(brands)) {
    gpu.brand = brand;
    Verdict v = evaluate(requirements, gpu);
    merged.outcomes |= v.outcomes;
    bool fails_surely = !(v.outcomes & kPass);
    if (!v.failed.empty() && (merged.failed.empty() || (fails_surely && !sure))) {
      merged.failed = v.failed;
      merged.condition = v.condition;
      sure = fails_surely;
    }
  }
  return merged;
}

std::vector<GpuTarget> gpu_targets(const Matrix& matrix, const Target& target) {
  GpuTarget base;
  if (target.driver) {
    if (auto cuda = cuda_version_of_driver(matrix, *target.driver)) base.cuda = fmt::format("{}.{}", cuda->major, cuda->minor);
    if (auto v = Version::parse(*target.driver); v && v->major() >= 100) base.driver = *target.driver;
  }
  std::vector<GpuTarget> out;
  for (const std::string& gpu : target.gpus)
    if (auto cc = compute_capability_of(matrix, gpu)) {
      out.push_back(base);
      out.back().arch = fmt::format("{}.{}", cc->major, cc->minor);
    }
  if (out.empty()) out.push_back(base);
  return out;
}

// Whether the requirements could pass on this GPU with another driver (and CUDA), and also with
// another architecture: neither holds for a contradiction such as brand=tesla and brand!=tesla.
bool passes_with(const ContainerRequirements& requirements, GpuTarget gpu, const std::vector<std::string>& brands,
                 bool any_arch) {
  gpu.cuda.reset();
  gpu.driver.reset();
  if (any_arch) gpu.arch.reset();
  return evaluate_each_brand(requirements, gpu, brands).outcomes & kPass;
}

std::string listed(const ContainerRequirements& requirements) {
  std::string out;
  for (const auto& [name, text] : requirements.variables)
    out += fmt::format("{}{}=\"{}\"", out.empty() ? "" : ", ", name, shortened(text));
  return shortened(out, 2000);
}

std::string driver_text(const Target& target, const GpuTarget& t) {
  return t.cuda ? fmt::format("driver {} (CUDA {})", *target.driver, *t.cuda) : fmt::format("driver {}", *target.driver);
}

constexpr const char* kWhoChecks = "docker run --gpus (the NVIDIA Container Toolkit's hook; CDI mode does not check)";

Finding requirement_finding(Severity severity, const std::string& image, std::string message, std::string fix) {
  Finding f;
  f.code = "container-requirement";
  f.severity = severity;
  f.path = image;
  f.message = fmt::format("{}: {}", image, message);
  f.fix = std::move(fix);
  return f;
}

// A refused container: the hook's "requirement error" (with dsl.c's CUDA `hint`), then `why`.
Finding refusal(const std::string& image, const std::string& on, const std::string& where, const Verdict& v,
                std::string_view hint, std::string_view why, std::string fix) {
  return requirement_finding(
      Severity::Error, image,
      fmt::format("on {} {} refuses to start a GPU container of this image{}: {} is not met (\"requirement error: "
                  "unsatisfied condition: {}{}\"){}", on, kWhoChecks, where, v.failed, v.condition, hint, why),
      std::move(fix));
}

}  // namespace

std::vector<Finding> check_container_requirements(const Matrix& matrix, const Target& target,
                                                  const ContainerRequirements& requirements, const std::string& image) {
  if (requirements.disabled) return {};
  if (!requirements.legacy_version_error.empty())
    return {requirement_finding(Severity::Error, image,
                                fmt::format("{} cannot start a GPU container of this image: its hook cannot read CUDA_VERSION=\"{}\" "
                                            "as a version", kWhoChecks, requirements.legacy_version_error),
                                "set CUDA_VERSION to major.minor.patch, or set NVIDIA_REQUIRE_CUDA")};
  if (requirements.variables.empty()) return {};
  if (!target.driver)
    return {requirement_finding(Severity::Info, image,
                                fmt::format("{} starts a GPU container of this image only where {} holds", kWhoChecks,
                                            listed(requirements)),
                                "--driver VERSION (and --gpu) checks it against the target here")};
  Outcomes all = 0;
  Verdict first_failing;
  const GpuTarget* failing_gpu = nullptr;
  std::vector<GpuTarget> gpus = gpu_targets(matrix, target);
  std::vector<std::string> brands = brand_candidates(requirements);
  bool refused = false;
  for (const GpuTarget& gpu : gpus) {
    Verdict v = evaluate_each_brand(requirements, gpu, brands);
    all |= v.outcomes;
    bool here_refused = !(v.outcomes & kPass);
    if ((v.outcomes & ~kPass) && (first_failing.failed.empty() || (here_refused && !refused))) {
      first_failing = v;
      failing_gpu = &gpu;
    }
    refused = refused || here_refused;
  }
  if (all == kPass) return {};
  std::string on = driver_text(target, gpus.front());
  if (refused && (first_failing.outcomes & kInvalid) && !(first_failing.outcomes & kFail))
    return {requirement_finding(Severity::Error, image,
                                fmt::format("on {} {} refuses to start a GPU container of this image: {} holds a constraint "
                                            "it cannot read (\"invalid expression\")", on, kWhoChecks, first_failing.failed),
                                "write each constraint as PROPERTY OPERATOR VERSION with cuda, driver, arch or brand "
                                "(cuda>=12.4), or set NVIDIA_DISABLE_REQUIRE=true")};
  if (refused && !passes_with(requirements, *failing_gpu, brands, true))
    return {refusal(image, on, "", first_failing, "", ", and with the other variables no brand of GPU meets them all",
                    "correct the image's NVIDIA_REQUIRE_* variables (a GPU has one brand), or docker run -e "
                    "NVIDIA_DISABLE_REQUIRE=true skips the check")};
  if (refused && !passes_with(requirements, *failing_gpu, brands, false))
    return {refusal(image, on, " on a GPU of compute capability " + failing_gpu->arch.value_or("?"), first_failing, "",
                    ", whatever the driver",
                    "run it on a GPU of an architecture the requirements admit, or use an image built for this one; "
                    "docker run -e NVIDIA_DISABLE_REQUIRE=true skips the check")};
  if (refused)
    return {refusal(image, on, "", first_failing,
                    first_failing.condition.starts_with("cuda>=")
                        ? ", please update your driver to a newer version, or use an earlier cuda container" : "",
                    "",
                    "install a newer driver on the host, or use an image built for an older CUDA; when the image's CUDA "
                    "libraries run on this driver through minor version compatibility, docker run -e "
                    "NVIDIA_DISABLE_REQUIRE=true skips the check")};
  return {requirement_finding(
      Severity::Warning, image,
      fmt::format("on {} whether {} starts a GPU container of this image depends on the GPU's brand{}: {} must hold", on,
                  kWhoChecks, target.gpus.empty() ? " or architecture" : "", listed(requirements)),
      target.gpus.empty() ? "compare the target GPU with the alternatives (brand=tesla is a datacenter GPU); --gpu gives its architecture"
                          : "compare the target GPU with the alternatives (brand=tesla is a datacenter GPU)")};
}

}  // namespace depscan
