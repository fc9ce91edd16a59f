// Pieces of run_verify shared between its files (not part of the loader's public interface).
#pragma once

#include "loader/verify.h"

namespace depscan {

void collect_steps(RuntimeReport& report, const ChildLimits& limits);
void collect_step_findings(RuntimeReport& report);
void collect_verdicts(RuntimeReport& report, const std::vector<Finding>& device_findings);

const StepRecord* find_step(const RuntimeReport& report, const std::string& step);

}  // namespace depscan
