// Every check is an independent function of the finished graph: f(context) -> findings.
// The worst severity over all findings decides the exit code (in cli/ only).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyzer/input/fs.h"
#include "analyzer/model.h"

namespace depscan {

class Matrix;

// What the user says about the machine the binaries will run on.
struct Target {
  std::optional<std::string> glibc;      // --target-glibc 2.28
  std::optional<std::string> baseline;   // --target named distribution baseline
  std::vector<std::string> gpus;         // --gpu sm_90 / H100 (several allowed)
  std::optional<std::string> driver;     // --driver 550.54.14
  bool bind_now = false;                 // --bind-now: model LD_BIND_NOW=1
};

struct CheckContext {
  const Graph& graph;
  const Matrix& matrix;
  const Target& target;
  const FileSystem& fs;
};

// Every NEEDED that did not resolve (library-not-found) and every unreadable object (parse-error).
std::vector<Finding> check_missing_libraries(const CheckContext& ctx);

}  // namespace depscan
