// The NVIDIA Container Toolkit's start-time check of an image's NVIDIA_REQUIRE_* variables against
// the target's driver (--driver) and GPUs (--gpu): where they fail, `docker run --gpus` does not
// start the container ("requirement error: unsatisfied condition: cuda>=12.4").
#pragma once

#include <string>
#include <vector>

#include "analyzer/check/check.h"
#include "analyzer/input/image.h"

namespace depscan {

std::vector<Finding> check_container_requirements(const Matrix& matrix, const Target& target,
                                                  const ContainerRequirements& requirements, const std::string& image);

}  // namespace depscan
