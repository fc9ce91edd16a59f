#include "cli/cuda_summary.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/json_text.h"
#include "report/report.h"

namespace depscan::cli {
namespace {

using nlohmann::json;

const std::set<std::string> kCudaCodes = {"cudnn-version-mismatch", "cudnn-cuda-mismatch", "cuda-driver-too-old",
                                          "stub-driver", "driver-library-mismatch", "dlopen-library-not-found",
                                          "cuda-major-mismatch", "library-not-found"};

struct Line {
  std::string component, name, path, version, how;
  bool found = false;
};

// The program standing for the application (/usr/bin/true on most systems); cuda_audit_root is set.
const std::string& program_path(const ScanReport& report) {
  const Graph& g = report.result.graph;
  return g.objects[g.roots[*report.cuda_audit_root]].path;
}

// What the audit program opened by name, in order, with where each one came from.
std::vector<Line> opened(const ScanReport& report) {
  const Graph& g = report.result.graph;
  const CudaStack& stack = *report.cuda_stack;
  std::vector<Line> lines;
  if (!report.cuda_audit_root) return lines;
  size_t root = *report.cuda_audit_root, program = g.roots[root];
  for (const Edge& e : g.edges) {
    if (e.root != root || e.from != program || e.kind != EdgeKind::Dlopen) continue;
    Line line;
    line.name = e.name;
    line.found = e.to.has_value();
    line.how = e.how_detail.empty() ? to_string(e.how) : e.how_detail;
    if (const CudaLibrary* lib = e.to ? stack.for_object(*e.to) : nullptr) {
      line.component = lib->component;
      line.path = g.objects[*e.to].realpath;
      if (lib->version) line.version = fmt::format("{} ({})", lib->version->str(), lib->version_source);
      if (lib->stub) line.version = "STUB (the toolkit's link-time stub, not a driver)";
    } else {
      line.component = e.name == "libcuda.so.1" ? "driver" : "";
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

std::pair<size_t, size_t> cuda_problems(const ScanReport& report) {
  size_t errors = 0, warnings = 0;
  for (const Finding& f : report.result.findings) {
    if (!kCudaCodes.contains(f.code)) continue;
    if (f.severity == Severity::Error) ++errors;
    else if (f.severity == Severity::Warning) ++warnings;
  }
  return {errors, warnings};
}

// The cuDNN libraries the audit program loads: a --root audit's other roots load their own.
std::vector<const CudaLibrary*> cudnn_reached(const ScanReport& report) {
  std::vector<const CudaLibrary*> out;
  if (!report.cuda_audit_root) return out;
  const std::vector<size_t>& loaded = report.result.graph.load_order[*report.cuda_audit_root];
  for (const CudaLibrary* lib : report.cuda_stack->of("cudnn"))
    if (std::find(loaded.begin(), loaded.end(), lib->object) != loaded.end()) out.push_back(lib);
  return out;
}

size_t sublibraries(const std::vector<const CudaLibrary*>& cudnn) {
  size_t n = 0;
  for (const CudaLibrary* lib : cudnn) n += lib->cudnn_shim ? 0 : 1;
  return n;
}

bool found(const std::vector<Line>& lines, std::string_view component) {
  for (const Line& l : lines)
    if (l.component == component && l.found) return true;
  return false;
}

// "the driver, runtime and cuDNN found fit together", naming only what was found.
std::string agreement(const std::vector<Line>& lines) {
  std::vector<std::string> parts;
  if (found(lines, "driver")) parts.push_back("driver");
  if (found(lines, "cudart")) parts.push_back("runtime");
  if (found(lines, "cudnn")) parts.push_back("cuDNN");
  if (parts.empty()) return "no conflict among the CUDA libraries found";
  if (parts.size() == 1) return "no conflict with the " + parts.front() + " found";
  std::string out = "the " + parts.front();
  for (size_t i = 1; i < parts.size(); ++i) out += (i + 1 == parts.size() ? " and " : ", ") + parts[i];
  return out + " found fit together";
}

std::string verdict(const ScanReport& report) {
  auto [errors, warnings] = cuda_problems(report);
  std::vector<Line> lines = opened(report);
  if (!report.cuda_audit_root) return "nothing to judge: no program to model the loader with";
  if (errors || warnings) return fmt::format("{} error(s), {} warning(s) in the CUDA stack: see the findings", errors, warnings);
  std::string consistent = "consistent: " + agreement(lines);
  if (found(lines, "driver")) return consistent;
  if (const auto& driver = report.cuda_stack->driver) {
    if (driver->source == "--driver")  // the target's driver, told: the scanned system may be a container image
      return fmt::format("{}; driver {} (--driver) is new enough; libcuda.so.1 itself is not in the analysed system "
                         "(in a container the NVIDIA Container Toolkit mounts it at run time)",
                         consistent, driver->version.str());
    return fmt::format("driver {} is installed ({}) but libcuda.so.1 is not on the search path: every CUDA call "
                       "fails until it is (run ldconfig, or add the driver's library directory to the search path)",
                       driver->version.str(), driver->source);
  }
  return consistent + "; no NVIDIA driver (libcuda.so.1) was found, so nothing runs on a GPU here until one is "
                      "installed (--driver checks against the target's)";
}

std::string text_summary(const ScanReport& report) {
  const CudaStack& stack = *report.cuda_stack;
  std::string out = "\nCUDA stack (what a program loading the CUDA libraries by name gets: LD_LIBRARY_PATH, "
                    "ld.so.cache, default paths)\n";
  std::vector<Line> lines = opened(report);
  if (!report.cuda_audit_root)
    out += "  no program in the analysed system to model the loader with (such as /usr/bin/true or /bin/sh)\n";
  for (const Line& l : lines) {
    if (!l.found) {
      out += fmt::format("  {:<10} {:<22} not found{}\n", l.component.empty() ? "-" : l.component, one_line(l.name),
                         l.name == "libcuda.so.1" ? " (no NVIDIA driver installed, or not on the search path)" : "");
      continue;
    }
    out += fmt::format("  {:<10} {:<22} {}  [{}]{}\n", l.component, one_line(l.name), one_line(l.path), one_line(l.how),
                       l.version.empty() ? "" : "\n  " + std::string(34, ' ') + "version " + one_line(l.version));
  }
  if (auto cudnn = cudnn_reached(report); !cudnn.empty())
    out += fmt::format("  cuDNN sub-libraries reached: {}\n", sublibraries(cudnn));
  out += stack.driver ? fmt::format("  driver version: {} ({})\n", stack.driver->version.str(), one_line(stack.driver->source))
                      : "  driver version: unknown (no /proc/driver/nvidia/version, no versioned libcuda; --driver sets it)\n";
  out += "  verdict: " + one_line(verdict(report)) + "\n";
  return out;
}

json json_summary(const ScanReport& report) {
  json j;
  j["opened"] = json::array();
  for (const Line& l : opened(report))
    j["opened"].push_back({{"name", l.name}, {"component", l.component}, {"found", l.found},
                           {"path", l.found ? json(l.path) : json(nullptr)}, {"how", l.how}, {"version", l.version}});
  const CudaStack& stack = *report.cuda_stack;
  j["program"] = report.cuda_audit_root ? json(program_path(report)) : json(nullptr);
  j["driver_version"] = stack.driver ? json(stack.driver->version.str()) : json(nullptr);
  j["driver_version_source"] = stack.driver ? json(stack.driver->source) : json(nullptr);
  j["cudnn_sublibraries"] = sublibraries(cudnn_reached(report));
  auto [errors, warnings] = cuda_problems(report);
  j["errors"] = errors;
  j["warnings"] = warnings;
  j["consistent"] = errors == 0 && warnings == 0;
  j["driver_found"] = found(opened(report), "driver");
  j["verdict"] = verdict(report);
  return j;
}

}  // namespace

ScanOptions with_cuda_audit(ScanOptions options) {
  if (options.inputs.empty() && !options.python_env) options.cuda_audit = true;
  return options;
}

std::string with_cuda_summary(const std::string& format, const ScanReport& report, std::string rendered) {
  if (!report.cuda_stack) return rendered;
  if (format == "text") return rendered + terminal_safe(text_summary(report), false);  // no colours of its own
  if (format != "json") return rendered;
  json doc = json::parse(rendered, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return rendered;
  doc["cuda_stack"] = json_summary(report);
  return json_text(doc);
}

}  // namespace depscan::cli
