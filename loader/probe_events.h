// The line protocol between the probe child and the parent: one JSON object per line, a
// `start` event before each step (naming the library it is about to touch) and an `end` event
// after it. Written with write(2), unbuffered, so everything before a crash has reached the pipe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace depscan {

enum class StepStatus { Ok, Failed, NotRun };
const char* to_string(StepStatus status);
std::optional<StepStatus> step_status_from(std::string_view text);

struct StepEvent {
  bool is_start = true;
  std::string step;                 // "cudnn.load", "driver.init", "kernel.device0", ...
  std::string library;              // what the step loads or calls into
  StepStatus status = StepStatus::Ok;   // end events only
  std::string message;              // one line: what happened, with the library's own error text
  nlohmann::json data = nlohmann::json::object();  // step-specific observations
  std::vector<std::string> loaded;  // objects the step added to the process (dl_iterate_phdr)
  double milliseconds = 0;
};

std::string encode_event(const StepEvent& event);
std::optional<StepEvent> decode_event(std::string_view line);

// Members of the child's JSON, which the parent does not trust, checked for their type: "",
// nullopt or false when the member is missing or of another type (json::value would throw).
std::string string_member(const nlohmann::json& j, const char* key);
std::optional<long long> number_member(const nlohmann::json& j, const char* key);
bool flag_member(const nlohmann::json& j, const char* key);

class EventWriter {
 public:
  explicit EventWriter(int fd) : fd_(fd) {}
  void write(const StepEvent& event) const;

 private:
  int fd_;
};

}  // namespace depscan
