// The probe child: depscan started in its hidden `__probe` mode with the application's
// environment. It loads cuDNN and the driver exactly as the application would (dlopen by name),
// runs one step at a time and reports each over the event pipe. Only the child ever loads
// CUDA or cuDNN; the parent only reads what it reports.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "loader/cuda_driver_api.h"
#include "loader/cudnn_api.h"
#include "loader/probe_events.h"

namespace depscan {

struct ProbeRequest {
  std::vector<std::string> cudnn_names;    // dlopen names to try in order; empty = no cuDNN step
  std::string driver_name = "libcuda.so.1";
  int max_devices = 8;                     // GPU steps run on devices 0..max_devices-1
  int parent_pid = 0;                      // the probe ends with this process (0: not asked)
};

nlohmann::json to_json(const ProbeRequest& request);
ProbeRequest probe_request_from(const nlohmann::json& j);

struct StepResult {
  StepStatus status = StepStatus::Ok;
  std::string message;
  nlohmann::json data = nlohmann::json::object();
};

struct ProbeDevice {
  int ordinal = 0;
  cuda::CUdevice handle = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  size_t memory = 0;
  cuda::CUcontext context = nullptr;       // retained primary context, released at the end
  cuda::CUresult retain_error = 0;         // what the last cuDevicePrimaryCtxRetain returned
  std::string unusable;                    // why its later steps do not run (a sticky error in its context)
};

struct ProbeState {
  void* cudnn = nullptr;
  std::string cudnn_name;
  cudnn::CudnnApi cudnn_api;
  int cudnn_major = 0;
  void* driver = nullptr;
  cuda::DriverApi cu;
  bool driver_ready = false;               // cuInit succeeded
  std::string no_gpu_reason;               // why GPU steps do not run ("no NVIDIA driver: ...")
  std::vector<ProbeDevice> devices;
  std::string cuda_unusable;               // why no later GPU step runs (a sticky error in the process)
};

StepResult load_cudnn(ProbeState& state, const ProbeRequest& request);
StepResult query_cudnn_versions(ProbeState& state);
StepResult check_cudnn_sublibraries(ProbeState& state);
StepResult load_driver(ProbeState& state, const ProbeRequest& request);
StepResult init_driver(ProbeState& state);
StepResult list_devices(ProbeState& state, int max_devices);
StepResult run_vector_add(ProbeState& state, ProbeDevice& device);
StepResult run_cudnn_convolution(ProbeState& state, ProbeDevice& device);

// Makes the device's primary context current, retaining it on first use. "" on success.
std::string make_context_current(ProbeState& state, ProbeDevice& device);
void release_contexts(ProbeState& state);

// After a GPU step on `device` failed: asks its context whether the failure left an error that
// outlives it (cuda::sticky_scope) and, if it did, records which later steps it rules out (the
// device's or the whole process's) and returns it. Without a context (its retain failed), the
// retain's own error is the one judged.
std::optional<cuda::CUresult> note_sticky_error(ProbeState& state, ProbeDevice& device, const std::string& failed_step);
// Why no further GPU step can run on `device` ("" = it can).
std::string unusable_reason(const ProbeState& state, const ProbeDevice& device);

// The child's entry point: runs every step, writing events to `event_fd`. Returns the exit code.
int probe_main(const std::string& request_json, int event_fd);

}  // namespace depscan
