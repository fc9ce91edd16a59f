// Pieces of run_verify shared between its files (not part of the loader's public interface).
#pragma once

#include <optional>
#include <string>

#include "loader/verify.h"

namespace depscan {

void collect_steps(RuntimeReport& report, const ChildLimits& limits);
void collect_step_findings(RuntimeReport& report);
void collect_verdicts(RuntimeReport& report, const std::vector<Finding>& device_findings);

const StepRecord* find_step(const RuntimeReport& report, const std::string& step);

// A member of a step's data, read from the child's output and so checked for its type: "",
// nullopt or false when the step is null or the member is missing or of another type.
std::string data_string(const StepRecord* s, const char* key);
std::optional<long long> data_number(const StepRecord* s, const char* key);
bool data_flag(const StepRecord* s, const char* key);

}  // namespace depscan
