// The NVIDIA Container Toolkit's NVIDIA_REQUIRE_* logic as depscan evaluates it against a target:
// space-separated terms ORed, comma-separated constraints ANDed, variables ANDed, other properties
// skipped, the GPU's brand never known here.
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
  auto findings = check_container_requirements(embedded_matrix(), target, {std::move(variables), false}, "image.tar");
  REQUIRE(findings.size() <= 1);
  return findings.empty() ? "none" : to_string(findings[0].severity);
}

}  // namespace

TEST_CASE("NVIDIA_REQUIRE_* against a target driver and GPU") {
  CHECK(outcome({{"NVIDIA_REQUIRE_CUDA", "cuda>=12.4"}}, "550.54.14") == "none");
  CHECK(outcome({{"NVIDIA_REQUIRE_CUDA", "cuda>=12.4"}}, "545.23.06") == "error");
  CHECK(outcome({{"NVIDIA_REQUIRE_CUDA", "cuda>=12.4"}}, nullptr) == "info");
  // every variable must hold; a constraint on another property is skipped, as the toolkit does
  CHECK(outcome({{"NVIDIA_REQUIRE_CUDA", "cuda>=12.0"}, {"NVIDIA_REQUIRE_DRIVER", "driver>=560"}}, "550.54.14") == "error");
  CHECK(outcome({{"NVIDIA_REQUIRE_CUDA", "cuda>=12.0 jetpack>=6,cuda>=99"}}, "550.54.14") == "none");
  CHECK(outcome({{"NVIDIA_REQUIRE_OTHER", "gpu_count>=2"}}, "550.54.14") == "none");
  // arch: the compute capability of each --gpu
  CHECK(outcome({{"NVIDIA_REQUIRE_ARCH", "arch>=8.0"}}, "550.54.14", {"sm_90"}) == "none");
  CHECK(outcome({{"NVIDIA_REQUIRE_ARCH", "arch>=8.0"}}, "550.54.14", {"sm_75"}) == "error");
  CHECK(outcome({{"NVIDIA_REQUIRE_ARCH", "arch>=8.0"}}, "550.54.14") == "warning");
  // the brand decides an alternative that the driver range allows
  CHECK(outcome({{"NVIDIA_REQUIRE_CUDA", "cuda>=12.4 brand=tesla,driver>=535,driver<536"}}, "535.104.05") == "warning");
  CHECK(outcome({{"NVIDIA_REQUIRE_CUDA", "cuda>=12.4 brand=tesla,driver>=535,driver<536"}}, "545.23.06") == "error");
  // a constraint the toolkit cannot read stops the container
  CHECK(outcome({{"NVIDIA_REQUIRE_CUDA", "cuda"}}, "550.54.14") == "error");
  CHECK(outcome({{"NVIDIA_REQUIRE_CUDA", "cuda>=twelve"}}, "550.54.14") == "error");
  // disabled: no finding at all
  Target old;
  old.driver = "440.33";
  CHECK(check_container_requirements(embedded_matrix(), old, {{{"NVIDIA_REQUIRE_CUDA", "cuda>=12.4"}}, true}, "image.tar").empty());
}
