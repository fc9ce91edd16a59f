#include "analyzer/check/container_requirements.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analyzer/check/gpu_targets.h"
#include "analyzer/util/strings.h"
#include "matrix/matrix.h"

namespace depscan {
namespace {

// The toolkit's logic (internal/requirements/constraints): space-separated terms are ORed,
// comma-separated constraints ANDed, the variables ANDed; a constraint on a property other than
// cuda, driver, arch and brand is skipped. Brand is never known here, so a constraint can be
// unknown, and so can the whole.
enum class Truth { False, Unknown, True };

struct TargetProperties {
  std::optional<Version> cuda;     // the newest CUDA the target driver runs
  std::optional<Version> driver;
  std::vector<Version> archs;      // compute capabilities of the --gpu GPUs
};

struct Evaluation {
  Truth truth = Truth::True;
  std::string unmet;               // the first constraint found false ("cuda>=12.4")
  bool invalid = false;            // a constraint without an operator, or a version that is none
  std::vector<std::string> unknown;  // the properties a constraint could not be decided on
};

void note_unknown(Evaluation& eval, std::string_view property) {
  std::string name = property == "brand" ? "the GPU's brand" : property == "arch" ? "the GPU's architecture (--gpu)"
                   : property == "cuda" ? "the driver's CUDA version" : "the driver's version";
  if (std::find(eval.unknown.begin(), eval.unknown.end(), name) == eval.unknown.end()) eval.unknown.push_back(name);
}

std::optional<bool> compare(const Version& have, std::string_view op, const Version& want) {
  auto order = have <=> want;
  if (op == "!=") return order != 0;
  if (op == "<=") return order <= 0;
  if (op == ">=") return order >= 0;
  if (op == "=") return order == 0;
  if (op == "<") return order < 0;
  if (op == ">") return order > 0;
  return std::nullopt;
}

// One constraint, or nullopt for one the toolkit skips.
std::optional<Truth> constraint(std::string_view text, const TargetProperties& target, Evaluation& eval) {
  size_t end = text.find_first_of("<>=!");
  if (end == std::string_view::npos) {
    eval.invalid = true;
    return Truth::False;
  }
  std::string_view property = text.substr(0, end), rest = text.substr(end);
  if (property != "cuda" && property != "driver" && property != "arch" && property != "brand") return std::nullopt;
  if (property == "brand") {
    note_unknown(eval, property);
    return Truth::Unknown;
  }
  std::string_view op;
  for (std::string_view candidate : {"!=", "<=", ">=", "=", "<", ">"})
    if (rest.starts_with(candidate)) {
      op = candidate;
      break;
    }
  auto want = Version::parse(rest.substr(op.size()));
  if (op.empty() || !want) {
    eval.invalid = true;
    return Truth::False;
  }
  std::vector<Version> have;
  if (property == "cuda" && target.cuda) have.push_back(*target.cuda);
  if (property == "driver" && target.driver) have.push_back(*target.driver);
  if (property == "arch") have = target.archs;
  if (have.empty()) {
    note_unknown(eval, property);
    return Truth::Unknown;
  }
  for (const Version& value : have)
    if (!compare(value, op, *want).value_or(false)) return Truth::False;
  return Truth::True;
}

Truth all_of(const std::vector<Truth>& parts) {
  Truth out = Truth::True;
  for (Truth t : parts) out = t == Truth::False ? Truth::False : out == Truth::False ? out : std::min(out, t);
  return out;
}

Truth any_of(const std::vector<Truth>& parts) {
  Truth out = Truth::False;
  for (Truth t : parts) out = std::max(out, t);
  return out;
}

Truth requirement(const std::string& text, const TargetProperties& target, Evaluation& eval) {
  std::vector<Truth> terms;
  for (const std::string& term : split_nonempty(text, " ")) {
    std::vector<Truth> factors;
    std::string first_false;
    for (const std::string& factor : split_nonempty(term, ",")) {
      auto t = constraint(factor, target, eval);
      if (!t) continue;
      if (*t == Truth::False && first_false.empty()) first_false = factor;
      factors.push_back(*t);
    }
    if (factors.empty()) continue;
    terms.push_back(all_of(factors));
    if (terms.back() == Truth::False && eval.unmet.empty()) eval.unmet = first_false;
  }
  return terms.empty() ? Truth::True : any_of(terms);
}

TargetProperties target_properties(const Matrix& matrix, const Target& target) {
  TargetProperties out;
  if (target.driver) {
    if (auto cuda = cuda_version_of_driver(matrix, *target.driver)) out.cuda = Version{{cuda->major, cuda->minor}};
    if (auto v = Version::parse(*target.driver); v && v->major() >= 100) out.driver = *v;
  }
  for (const std::string& gpu : target.gpus)
    if (auto cc = compute_capability_of(matrix, gpu)) out.archs.push_back(Version{{cc->major, cc->minor}});
  return out;
}

std::string listed(const ContainerRequirements& requirements) {
  std::string out;
  for (const auto& [name, text] : requirements.variables) out += fmt::format("{}{}=\"{}\"", out.empty() ? "" : ", ", name, text);
  return out;
}

std::string driver_text(const Target& target, const TargetProperties& p) {
  return p.cuda ? fmt::format("driver {} (CUDA {})", *target.driver, p.cuda->str()) : fmt::format("driver {}", *target.driver);
}

}  // namespace

std::vector<Finding> check_container_requirements(const Matrix& matrix, const Target& target,
                                                  const ContainerRequirements& requirements, const std::string& image) {
  if (requirements.disabled || requirements.variables.empty()) return {};
  Finding f;
  f.code = "container-requirement";
  f.path = image;
  if (!target.driver) {
    f.severity = Severity::Info;
    f.message = fmt::format("{}: the NVIDIA Container Toolkit starts a GPU container of this image only where {} holds",
                            image, listed(requirements));
    f.fix = "--driver VERSION (and --gpu) checks it against the target here";
    return {f};
  }
  TargetProperties properties = target_properties(matrix, target);
  Evaluation eval;
  std::vector<Truth> each;
  for (const auto& [name, text] : requirements.variables) each.push_back(requirement(text, properties, eval));
  Truth truth = all_of(each);
  if (truth == Truth::True && !eval.invalid) return {};
  if (eval.invalid) {
    f.severity = Severity::Error;
    f.message = fmt::format("{}: {} holds a constraint the NVIDIA Container Toolkit cannot read, so it refuses to start "
                            "a GPU container of it", image, listed(requirements));
    f.fix = "correct the NVIDIA_REQUIRE_* variable (PROPERTY OPERATOR VERSION, as in cuda>=12.4), or set NVIDIA_DISABLE_REQUIRE=true";
    return {f};
  }
  if (truth == Truth::Unknown) {
    f.severity = Severity::Warning;
    f.message = fmt::format("{}: on {} whether the NVIDIA Container Toolkit starts a GPU container of this image depends "
                            "on {}: {} must hold", image, driver_text(target, properties),
                            fmt::join(eval.unknown, " and "), listed(requirements));
    f.fix = "compare the target GPU with the alternatives (brand=tesla is a datacenter GPU); --gpu gives the architecture";
    return {f};
  }
  f.severity = Severity::Error;
  f.message = fmt::format("{}: on {} the NVIDIA Container Toolkit refuses to start a GPU container of this image: {} "
                          "is not met (nvidia-container-cli: requirement error: unsatisfied condition: {})",
                          image, driver_text(target, properties), listed(requirements), eval.unmet);
  f.fix = "install a newer driver on the host, or use an image built for an older CUDA; when the image's CUDA "
          "libraries run on this driver through minor version compatibility, docker run -e NVIDIA_DISABLE_REQUIRE=true "
          "skips the check";
  return {f};
}

}  // namespace depscan
