// The probe child's sequence of steps. Each step is announced before it runs (so a crash or a
// hang can be pinned on it) and reported after it, with the objects it added to the process.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>

#include <fmt/format.h>

#include "loader/loaded_objects.h"
#include "loader/probe.h"

namespace depscan {
namespace {

class StepRunner {
 public:
  explicit StepRunner(int fd) : events_(fd) {}

  StepStatus run(const std::string& step, const std::string& library, const std::function<StepResult()>& body) {
    StepEvent start;
    start.step = step;
    start.library = library;
    events_.write(start);
    auto t0 = std::chrono::steady_clock::now();
    StepResult result = body();
    StepEvent end = start;
    end.is_start = false;
    end.status = result.status;
    end.message = result.message;
    end.data = std::move(result.data);
    end.loaded = tracker_.newly_loaded();
    end.milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    events_.write(end);
    return result.status;
  }

 private:
  EventWriter events_;
  LoadTracker tracker_;
};

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : " or ") + n;
  return out;
}

// A step on one GPU. After an error that outlives its step the driver would fail the later steps
// with it, under their library's name, so they are reported as not run, naming the step that left it.
void run_gpu_step(StepRunner& steps, ProbeState& state, ProbeDevice& device, const std::string& step,
                  const std::string& library, const std::function<StepResult()>& body) {
  nlohmann::json where = {{"device", device.ordinal}, {"sm", fmt::format("sm_{}{}", device.cc_major, device.cc_minor)}};
  if (std::string reason = unusable_reason(state, device); !reason.empty()) {
    where["after_sticky_error"] = true;
    steps.run(step, library, [&] { return StepResult{StepStatus::NotRun, reason, where}; });
    return;
  }
  steps.run(step, library, [&] {
    StepResult result = body();
    // The check synchronises with the GPU, which can hang: it is part of the step, under its timeout.
    if (result.status != StepStatus::Failed) return result;
    if (auto sticky = note_sticky_error(state, device, step)) {
      result.data["sticky_error"] = *sticky;
      if (!device.context) result.data["sticky_error_call"] = "cuDevicePrimaryCtxRetain";  // no context was made
      std::string left = describe_cuda_error(state.cu, *sticky);
      if (result.message.find(left) == std::string::npos) result.message += "; then cuCtxSynchronize returned " + left;
    }
    return result;
  });
}

}  // namespace

nlohmann::json to_json(const ProbeRequest& request) {
  return {{"cudnn_names", request.cudnn_names}, {"driver_name", request.driver_name},
          {"max_devices", request.max_devices}, {"parent_pid", request.parent_pid}};
}

ProbeRequest probe_request_from(const nlohmann::json& j) {
  ProbeRequest r;
  if (j.contains("cudnn_names") && j["cudnn_names"].is_array())
    for (const auto& n : j["cudnn_names"])
      if (n.is_string()) r.cudnn_names.push_back(n.get<std::string>());
  if (j.contains("driver_name") && j["driver_name"].is_string()) r.driver_name = j["driver_name"].get<std::string>();
  if (j.contains("max_devices") && j["max_devices"].is_number_integer()) r.max_devices = j["max_devices"].get<int>();
  if (j.contains("parent_pid") && j["parent_pid"].is_number_integer()) r.parent_pid = j["parent_pid"].get<int>();
  return r;
}

int probe_main(const std::string& request_json, int event_fd) {
  auto parsed = nlohmann::json::parse(request_json, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    fmt::print(stderr, "depscan __probe: the request is not a JSON object\n");
    return 2;
  }
  // A helper process a loaded library starts must not hold the event pipe: the parent reads it to its end.
  if (::fcntl(event_fd, F_SETFD, FD_CLOEXEC) != 0) {
    fmt::print(stderr, "depscan __probe: event descriptor {}: {}\n", event_fd, std::strerror(errno));
    return 2;
  }
  ProbeRequest request = probe_request_from(parsed);
  // A probe hung in a driver call must not outlive depscan (Ctrl-C, a CI job's timeout): it is in
  // a process group of its own, so only its parent's death can reach it.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (request.parent_pid && ::getppid() != request.parent_pid) return 2;  // the parent died before prctl
  ProbeState state;
  StepRunner steps(event_fd);
  // The driver and kernel steps come first: a cuDNN that cannot load a sub-library aborts the
  // process (cuDNN 9 without libcudnn_graph: "Invalid handle. Cannot load symbol cudnnGetVersion"),
  // and what the driver and the GPU said must be on record by then.
  steps.run("driver.load", request.driver_name, [&] { return load_driver(state, request); });
  steps.run("driver.init", request.driver_name, [&] { return init_driver(state); });
  steps.run("driver.devices", request.driver_name, [&] { return list_devices(state, request.max_devices); });
  for (ProbeDevice& device : state.devices)
    run_gpu_step(steps, state, device, fmt::format("kernel.device{}", device.ordinal), request.driver_name + " (PTX JIT)",
                 [&] { return run_vector_add(state, device); });
  std::string no_gpu = "not run: " + (state.no_gpu_reason.empty() ? std::string("no CUDA device") : state.no_gpu_reason);
  if (state.devices.empty())
    steps.run("kernel", request.driver_name + " (PTX JIT)", [&] { return StepResult{StepStatus::NotRun, no_gpu, {}}; });
  if (!request.cudnn_names.empty()) {
    std::string cudnn = joined(request.cudnn_names);
    steps.run("cudnn.load", cudnn, [&] { return load_cudnn(state, request); });
    steps.run("cudnn.version", cudnn, [&] { return query_cudnn_versions(state); });
    steps.run("cudnn.sublibraries", cudnn + " sub-libraries", [&] { return check_cudnn_sublibraries(state); });
    for (ProbeDevice& device : state.devices)
      run_gpu_step(steps, state, device, fmt::format("cudnn.convolution.device{}", device.ordinal),
                   state.cudnn_name.empty() ? cudnn : state.cudnn_name,
                   [&] { return run_cudnn_convolution(state, device); });
    if (state.devices.empty())
      steps.run("cudnn.convolution", cudnn, [&] { return StepResult{StepStatus::NotRun, no_gpu, {}}; });
  }
  if (state.driver_ready) release_contexts(state);
  return 0;
}

}  // namespace depscan
