#include "loader/probe_events.h"

#include <unistd.h>

#include <cerrno>

namespace depscan {

const char* to_string(StepStatus status) {
  switch (status) {
    case StepStatus::Ok: return "ok";
    case StepStatus::Failed: return "failed";
    case StepStatus::NotRun: return "not run";
  }
  return "?";
}

std::optional<StepStatus> step_status_from(std::string_view text) {
  for (StepStatus s : {StepStatus::Ok, StepStatus::Failed, StepStatus::NotRun})
    if (text == to_string(s)) return s;
  return std::nullopt;
}

std::string encode_event(const StepEvent& event) {
  nlohmann::json j = {{"event", event.is_start ? "start" : "end"}, {"step", event.step},
                      {"library", event.library}};
  if (!event.is_start) {
    j["status"] = to_string(event.status);
    j["message"] = event.message;
    j["data"] = event.data;
    j["loaded"] = event.loaded;
    j["ms"] = event.milliseconds;
  }
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string string_member(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<long long> number_member(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<long long>();
}

bool flag_member(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}

std::optional<StepEvent> decode_event(std::string_view line) {
  auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("step") || !j["step"].is_string())
    return std::nullopt;
  StepEvent e;
  e.is_start = string_member(j, "event") == "start";
  e.step = j["step"].get<std::string>();
  e.library = string_member(j, "library");
  if (e.is_start) return e;
  auto status = step_status_from(string_member(j, "status"));
  if (!status) return std::nullopt;
  e.status = *status;
  e.message = string_member(j, "message");
  if (j.contains("data") && j["data"].is_object()) e.data = j["data"];
  if (j.contains("loaded") && j["loaded"].is_array())
    for (const auto& p : j["loaded"])
      if (p.is_string()) e.loaded.push_back(p.get<std::string>());
  if (j.contains("ms") && j["ms"].is_number()) e.milliseconds = j["ms"].get<double>();
  return e;
}

void EventWriter::write(const StepEvent& event) const {
  std::string line = encode_event(event);
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the parent is gone: nothing left to report to
    done += static_cast<size_t>(n);
  }
}

}  // namespace depscan
