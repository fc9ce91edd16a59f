// The driver libraries `docker run --gpus` mounts into a container: the NVIDIA Container Toolkit's
// hook mounts only those of the capabilities the image's NVIDIA_DRIVER_CAPABILITIES selects, and
// refuses a capability it does not know.
#pragma once

#include <string>
#include <vector>

#include "analyzer/input/image.h"
#include "analyzer/model.h"
#include "matrix/matrix.h"

namespace depscan {

std::vector<Finding> check_container_capabilities(const Graph& g, const Matrix& matrix, const ImageEnvironment& env,
                                                  const std::string& image);

}  // namespace depscan
