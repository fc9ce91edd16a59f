// NVIDIA_REQUIRE_* as libnvidia-container checks it before `docker run --gpus` starts a container,
// evaluated against a target: space-separated terms ORed, comma-separated constraints ANDed, left to
// right and stopping once decided, variables ANDed, each GPU on its own; an unknown property is an
// invalid expression when reached; the GPU's brand is never known here, so every brand the
// variables name, and one they do not, is tried.
#include <doctest/doctest.h>

#include "analyzer/check/container_requirements.h"
#include "matrix/matrix.h"
#include "embedded_matrix.h"
#include "support.h"

using namespace depscan;

namespace {

// The severity of the one finding, or "none".
std::string outcome(std::vector<std::pair<std::string, std::string>> variables, const char* driver,
                    std::vector<std::string> gpus = {}) {
  Target target;
  if (driver) target.driver = driver;
  target.gpus = std::move(gpus);
  ContainerRequirements requirements;
  requirements.variables = std::move(variables);
  auto findings = check_container_requirements(embedded_matrix(), target, requirements, "image.tar");
  REQUIRE(findings.size() <= 1);
  return findings.empty() ? "none" : to_string(findings[0].severity);
}

std::string message(std::vector<std::pair<std::string, std::string>> variables, const char* driver) {
  Target target;
  target.driver = driver;
  ContainerRequirements requirements;
  requirements.variables = std::move(variables);
  auto findings = check_container_requirements(embedded_matrix(), target, requirements, "image.tar");
  return findings.empty() ? "" : findings[0].message;
}

}  // namespace

TEST_CASE("NVIDIA_REQUIRE_* against a target driver and GPU") {
  CHECK(outcome({{"NVIDIA_REQUIRE_CUDA", "cuda>=12.4"}}, "550.54.14") == "none");
  CHECK(outcome({{"NVIDIA_REQUIRE_CUDA", "cuda>=12.4"}}, "545.23.06") == "error");
  CHECK(outcome({{"NVIDIA_REQUIRE_CUDA", "cuda>=12.4"}}, nullptr) == "info");
  // every variable must hold
  CHECK(outcome({{"NVIDIA_REQUIRE_CUDA", "cuda>=12.0"}, {"NVIDIA_REQUIRE_DRIVER", "driver>=560"}}, "550.54.14") == "error");
  // left to right, stopping once decided: what is never reached is never read
  CHECK(outcome({{"NVIDIA_REQUIRE_CUDA", "cuda>=12.0 garbage"}}, "550.54.14") == "none");
  CHECK(outcome({{"NVIDIA_REQUIRE_CUDA", "cuda>=13.0 garbage"}}, "550.54.14") == "error");
  // a property libnvidia-container does not know is an invalid expression; names ignore case
  CHECK(outcome({{"NVIDIA_REQUIRE_OTHER", "gpu_count>=2"}}, "550.54.14") == "error");
  CHECK(outcome({{"NVIDIA_REQUIRE_CUDA", "CUDA>=12.4"}}, "545.23.06") == "error");
  CHECK(outcome({{"NVIDIA_REQUIRE_CUDA", "CUDA>=12.4"}}, "550.54.14") == "none");
  // arch: the compute capability of each --gpu, each GPU checked on its own
  CHECK(outcome({{"NVIDIA_REQUIRE_ARCH", "arch>=8.0"}}, "550.54.14", {"sm_90"}) == "none");
  CHECK(outcome({{"NVIDIA_REQUIRE_ARCH", "arch>=8.0"}}, "550.54.14", {"sm_75"}) == "error");
  CHECK(outcome({{"NVIDIA_REQUIRE_ARCH", "arch>=8.0"}}, "550.54.14") == "warning");
  CHECK(outcome({{"NVIDIA_REQUIRE_ARCH", "arch=8.0 arch=9.0"}}, "550.54.14", {"sm_80", "sm_90"}) == "none");
  CHECK(outcome({{"NVIDIA_REQUIRE_ARCH", "arch=8.0 arch=9.0"}}, "550.54.14", {"sm_80", "sm_86"}) == "error");
  // the brand decides an alternative that the driver range allows
  CHECK(outcome({{"NVIDIA_REQUIRE_CUDA", "cuda>=12.4 brand=tesla,driver>=535,driver<536"}}, "535.104.05") == "warning");
  CHECK(outcome({{"NVIDIA_REQUIRE_CUDA", "cuda>=12.4 brand=tesla,driver>=535,driver<536"}}, "545.23.06") == "error");
  // a constraint that cannot be read stops the container when reached
  CHECK(outcome({{"NVIDIA_REQUIRE_CUDA", "cuda"}}, "550.54.14") == "error");
  CHECK(outcome({{"NVIDIA_REQUIRE_CUDA", "cuda>=twelve"}}, "550.54.14") == "error");
  // an empty variable holds; a term of commas only ends the evaluation with the result so far
  CHECK(outcome({{"NVIDIA_REQUIRE_CUDA", ""}}, "440.33") == "none");
  CHECK(outcome({{"NVIDIA_REQUIRE_CUDA", "cuda>=13.0 ,"}}, "550.54.14") == "error");
  // brand is compared for equality only
  CHECK(outcome({{"NVIDIA_REQUIRE_BRAND", "brand>=tesla"}}, "550.54.14") == "error");
  CHECK(outcome({{"NVIDIA_REQUIRE_BRAND", "brand!=geforce"}}, "550.54.14") == "warning");
  // the GPU has one brand, whatever the variables say about it: each is tried in turn, ignoring case
  CHECK(outcome({{"NVIDIA_REQUIRE_A", "brand=tesla"}, {"NVIDIA_REQUIRE_B", "brand!=TESLA"}}, "550.54.14") == "error");
  CHECK(outcome({{"NVIDIA_REQUIRE_BRAND", "brand=tesla brand!=Tesla"}}, "550.54.14") == "none");
  CHECK(outcome({{"NVIDIA_REQUIRE_BRAND", "brand=tesla,brand=geforce"}}, "550.54.14") == "error");
  CHECK(outcome({{"NVIDIA_REQUIRE_A", "brand=tesla brand=geforce"}, {"NVIDIA_REQUIRE_B", "brand!=nvs"}}, "550.54.14") ==
        "warning");
  // more brands than are tried: each brand constraint is left undecided
  std::string many;
  for (int i = 0; i < 20; ++i) many += "brand!=b" + std::to_string(i) + ",";
  CHECK(outcome({{"NVIDIA_REQUIRE_BRAND", many + "brand=tesla"}, {"NVIDIA_REQUIRE_NOT", "brand!=tesla"}}, "550.54.14") ==
        "warning");
  // the refusal names what fails on a GPU of a brand the variables do not name (the hook's own
  // order of variables is a Go map's, so it may name another that fails too)
  std::string refused = message({{"NVIDIA_REQUIRE_CUDA", "cuda>=12.4 brand=tesla,driver>=535,driver<536"},
                                 {"NVIDIA_REQUIRE_DRIVER", "driver>=560"}}, "535.104.05");
  CHECK_MESSAGE(refused.find("NVIDIA_REQUIRE_CUDA=\"cuda>=12.4 brand=tesla,driver>=535,driver<536\" is not met") !=
                std::string::npos, refused);
  std::vector<std::pair<std::string, std::string>> tesla_only = {
      {"NVIDIA_REQUIRE_CUDA", "cuda>=12.0 brand=tesla,driver>=470,driver<471"}, {"NVIDIA_REQUIRE_Z", "brand=geforce"}};
  CHECK(outcome(tesla_only, "470.57.02") == "error");
  std::string brand_named = message(tesla_only, "470.57.02");
  CHECK_MESSAGE(brand_named.find("NVIDIA_REQUIRE_CUDA=\"cuda>=12.0 brand=tesla,driver>=470,driver<471\" is not met") !=
                std::string::npos, brand_named);
  // a newer driver lifts this refusal for GPUs of other brands: the usual message
  std::string liftable = message({{"NVIDIA_REQUIRE_A", "brand=tesla cuda>=13.0"}, {"NVIDIA_REQUIRE_B", "brand!=tesla"}},
                                 "550.54.14");
  CHECK_MESSAGE(liftable.find("no brand of GPU") == std::string::npos, liftable);
  CHECK_MESSAGE(liftable.find("unsatisfied condition: brand=tesla") != std::string::npos, liftable);
  // a GPU too old for the image: no driver helps, and the variables are not at fault
  Target old_gpu;
  old_gpu.driver = "550.54.14";
  old_gpu.gpus = {"sm_86"};
  ContainerRequirements hopper;
  hopper.variables = {{"NVIDIA_REQUIRE_ARCH", "arch>=9.0"}};
  auto arch_refusal = check_container_requirements(embedded_matrix(), old_gpu, hopper, "image.tar");
  REQUIRE(arch_refusal.size() == 1);
  CHECK(arch_refusal[0].message.find("on a GPU of compute capability 8.6") != std::string::npos);
  CHECK(arch_refusal[0].message.find("no brand of GPU") == std::string::npos);
  CHECK(arch_refusal[0].fix.starts_with("run it on a GPU of an architecture the requirements admit"));
  // a number dsl.c cannot read is an invalid expression where the comparison reaches it
  CHECK(outcome({{"NVIDIA_REQUIRE_ARCH", "arch>=8.99999999999999999999"}}, "550.54.14", {"sm_86"}) == "error");
  CHECK(outcome({{"NVIDIA_REQUIRE_ARCH", "arch>=8.99999999999999999999"}}, "550.54.14", {"sm_90"}) == "none");
  CHECK(outcome({{"NVIDIA_REQUIRE_ARCH", "arch>=8.99999999999999999999"}}, "550.54.14") == "warning");
  // versions as dsl_compare_version reads them: runs of dots skipped, numbers up to 2^64 - 2
  CHECK(outcome({{"NVIDIA_REQUIRE_CUDA", "cuda>=12..4"}}, "550.54.14") == "none");
  CHECK(outcome({{"NVIDIA_REQUIRE_CUDA", "cuda>=12."}}, "550.54.14") == "none");
  CHECK(outcome({{"NVIDIA_REQUIRE_DRIVER", "driver<99999999999"}}, "550.54.14") == "none");
  CHECK(outcome({{"NVIDIA_REQUIRE_DRIVER", "driver<18446744073709551615"}}, "550.54.14") == "error");  // strtoumax's overflow value
  CHECK(outcome({{"NVIDIA_REQUIRE_CUDA", "cuda>=.5"}}, "550.54.14") == "error");
  // a false constraint too long for dsl.c's 128-byte error buffer is an invalid expression
  std::string long_version = "13.0." + std::string(130, '0');
  CHECK(outcome({{"NVIDIA_REQUIRE_CUDA", "cuda>=" + long_version + " cuda>=12.0"}}, "550.54.14") == "error");
  CHECK(message({{"NVIDIA_REQUIRE_CUDA", "cuda>=" + long_version + " cuda>=12.0"}}, "550.54.14").find("invalid expression") !=
        std::string::npos);
  CHECK(outcome({{"NVIDIA_REQUIRE_CUDA", "cuda<" + long_version}}, "550.54.14") == "none");  // true: nothing is formatted
  // the condition quoted is the variable up to its first space, as dsl.c cuts it
  CHECK(message({{"NVIDIA_REQUIRE_CUDA", " cuda>=13.0"}}, "550.54.14").find("unsatisfied condition: \")") != std::string::npos);
  // a long variable name is shortened in the message
  CHECK(message({{"NVIDIA_REQUIRE_" + std::string(5000, 'X'), "cuda>=13.0"}}, "550.54.14").size() < 1000);
  // a refusal no driver can lift: the variables exclude every brand
  Target t;
  t.driver = "550.54.14";
  ContainerRequirements contradiction;
  contradiction.variables = {{"NVIDIA_REQUIRE_A", "brand=tesla"}, {"NVIDIA_REQUIRE_B", "brand!=tesla"}};
  auto found = check_container_requirements(embedded_matrix(), t, contradiction, "image.tar");
  REQUIRE(found.size() == 1);
  CHECK(found[0].message.find("no brand of GPU meets them all") != std::string::npos);
  CHECK(found[0].fix.starts_with("correct the image's NVIDIA_REQUIRE_* variables"));
  // operators as dsl.c reads them: "!" is !=, "==" and an empty value are invalid expressions
  CHECK(outcome({{"NVIDIA_REQUIRE_BRAND", "brand!tesla"}}, "550.54.14") == "warning");
  CHECK(outcome({{"NVIDIA_REQUIRE_BRAND", "brand==tesla"}}, "550.54.14") == "error");
  CHECK(outcome({{"NVIDIA_REQUIRE_BRAND", "brand="}}, "550.54.14") == "error");
  CHECK(outcome({{"NVIDIA_REQUIRE_CUDA", "cuda>=12.4a"}}, "550.54.14") == "error");
  CHECK(outcome({{"NVIDIA_REQUIRE_CUDA", "cuda>=v12.4"}}, "550.54.14") == "error");
  CHECK(outcome({{"NVIDIA_REQUIRE_CUDA", "cuda>=12.4"}}, "550.54.14") == "none");
  // disabled: no finding at all
  Target old;
  old.driver = "440.33";
  ContainerRequirements disabled;
  disabled.variables = {{"NVIDIA_REQUIRE_CUDA", "cuda>=12.4"}};
  disabled.disabled = true;
  CHECK(check_container_requirements(embedded_matrix(), old, disabled, "image.tar").empty());
}
