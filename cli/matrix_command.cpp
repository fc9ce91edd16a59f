// depscan matrix ...: answers questions from the CUDA/cuDNN/framework data, each answer with the
// data's source. driver 12.4 | toolkit 13.0 | cudnn 9.1 | framework tensorflow 2.15 | gpu H100.
#include <algorithm>
#include <cstdio>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "analyzer/util/terminal_text.h"
#include "report/json_text.h"
#include "cli/commands.h"
#include "matrix/matrix.h"

namespace depscan::cli {
namespace {

using nlohmann::json;

struct MatrixArgs {
  std::string format = "text";
  std::optional<std::string> matrix_path;
  std::vector<std::string> words;  // the question's arguments
};

// One answer: text lines for people, a JSON object for pipelines.
struct Answer {
  std::string text;
  json data = json::object();
  bool found = true;
};

std::string opt(const std::optional<Version>& v, std::string_view none = "n/a") {
  return v ? v->str() : std::string(none);
}
json opt_json(const std::optional<Version>& v) { return v ? json(v->str()) : json(nullptr); }
std::string status_note(RowStatus s) { return s == RowStatus::Secondary ? " [secondary source]" : ""; }

Expected<Version> version_arg(const std::vector<std::string>& words, size_t i, std::string_view what) {
  if (words.size() <= i) return Error{fmt::format("missing {}", what)};
  auto v = Version::parse(words[i]);
  if (!v) return Error{fmt::format("'{}' is not a version", words[i])};
  return *v;
}

Answer answer_driver(const Matrix& m, const Version& cuda) {
  Answer a;
  a.data["question"] = "driver";
  a.data["cuda"] = cuda.str();
  const DriverRow* row = m.driver_row(cuda);
  const MinorCompatRow* compat = m.minor_compat(cuda.major());
  if (!row && !compat) {
    a.found = false;
    a.text = fmt::format("CUDA {}: not in the driver table\n", cuda.str());
    return a;
  }
  if (row) {
    a.text += fmt::format("CUDA {} ({}) needs NVIDIA driver >= {} on Linux x86_64, >= {} on Windows{}\n", cuda.str(),
                          row->release, opt(row->linux_driver), opt(row->windows_driver), status_note(row->status));
    if (!row->note.empty()) a.text += fmt::format("  note: {}\n", row->note);
    a.text += fmt::format("  source: {}\n", row->source);
    a.data["release"] = row->release;
    a.data["linux"] = opt_json(row->linux_driver);
    a.data["windows"] = opt_json(row->windows_driver);
    a.data["status"] = to_string(row->status);
    a.data["source"] = row->source;
  }
  if (compat) {
    a.text += fmt::format("Minor-version compatibility: every CUDA {}.x runs on driver >= {} (Linux), >= {} (Windows), "
                          "branch >= {}{}\n",
                          compat->major, opt(compat->linux_driver), opt(compat->windows_driver), compat->branch,
                          compat->upper_branch ? fmt::format(", range up to branch {}", *compat->upper_branch) : "");
    a.text += "  except:";
    for (const FullDriverFeature& f : m.full_driver_features()) a.text += "\n    - " + f.feature;
    a.text += fmt::format("\n  source: {}\n", compat->source);
    a.data["minor_compatibility"] = {{"major", compat->major},
                                     {"linux", opt_json(compat->linux_driver)},
                                     {"windows", opt_json(compat->windows_driver)},
                                     {"branch", compat->branch},
                                     {"source", compat->source}};
  } else if (cuda.major() <= 10) {
    a.text += "No minor-version compatibility before CUDA 11: the driver must meet this toolkit's own minimum.\n";
  }
  return a;
}

Answer answer_toolkit(const Matrix& m, const Version& cuda) {
  Answer a = answer_driver(m, cuda);
  a.data["question"] = "toolkit";
  const ArchitectureRow* arch = m.architectures_for(cuda);
  if (!arch) {
    a.text += fmt::format("CUDA {}: no architecture data\n", cuda.str());
    return a;
  }
  std::string sms;
  for (const std::string& sm : arch->sm) sms += (sms.empty() ? "sm_" : " sm_") + sm;
  a.text += fmt::format("CUDA {} compiles for: {} (as of CUDA {})\n", cuda.str(), sms, arch->toolkit.str());
  if (!arch->note.empty()) a.text += fmt::format("  note: {}\n", arch->note);
  a.text += fmt::format("  source: {}\n", arch->source);
  a.found = true;
  a.data["architectures"] = {{"sm", arch->sm}, {"since", arch->toolkit.str()}, {"source", arch->source}};
  return a;
}

// A build's GPU range narrows its release's: a bound the build does not give is the release's.
std::optional<Version> build_sm_min(const CudnnRelease& r, const CudnnBuild& b) { return b.sm_min ? b.sm_min : r.sm_min; }
std::optional<Version> build_sm_max(const CudnnRelease& r, const CudnnBuild& b) { return b.sm_max ? b.sm_max : r.sm_max; }

// "5.0 to 9.0", "3.5 and later" (the old support matrices give no newest), "up to 9.0".
std::string sm_range_text(const std::optional<Version>& min, const std::optional<Version>& max) {
  if (min && max) return min->str() + " to " + max->str();
  return min ? min->str() + " and later" : "up to " + max->str();
}

std::string build_text(const CudnnRelease& r, const CudnnBuild& b) {
  std::string cuda = b.cuda_min == b.cuda_max ? b.cuda_min.str() : b.cuda_min.str() + "-" + b.cuda_max.str();
  std::string out = "CUDA " + cuda;
  std::vector<std::string> drivers;  // only the platforms the source gives a floor for
  if (b.linux_driver) drivers.push_back(fmt::format(">= {} Linux", b.linux_driver->str()));
  if (b.windows_driver) drivers.push_back(fmt::format(">= {} Windows", b.windows_driver->str()));
  if (!drivers.empty()) out += fmt::format(" (driver {})", fmt::join(drivers, ", "));
  if (b.sm_min || b.sm_max)
    out += " SM " + sm_range_text(build_sm_min(r, b), build_sm_max(r, b));
  if (!b.note.empty()) out += "; " + b.note;
  return out;
}

Answer answer_cudnn(const Matrix& m, const Version& version) {
  Answer a;
  a.data["question"] = "cudnn";
  a.data["cudnn"] = version.str();
  a.data["releases"] = json::array();
  for (const CudnnRelease* r : m.cudnn_releases_matching(version)) {
    std::string versions;
    for (const Version& v : r->versions) versions += (versions.empty() ? "" : ", ") + v.str();
    a.text += fmt::format("cuDNN {}{}\n", versions, status_note(r->status));
    json builds = json::array();
    for (const CudnnBuild& b : r->builds) {
      a.text += "  build for " + build_text(*r, b) + "\n";
      builds.push_back({{"cuda_min", b.cuda_min.str()}, {"cuda_max", b.cuda_max.str()},
                        {"linux", opt_json(b.linux_driver)}, {"windows", opt_json(b.windows_driver)},
                        {"sm_min", opt_json(build_sm_min(*r, b))}, {"sm_max", opt_json(build_sm_max(*r, b))},
                        {"note", b.note}});
    }
    if (r->sm_min || r->sm_max) a.text += "  GPUs: compute capability " + sm_range_text(r->sm_min, r->sm_max) + "\n";
    if (!r->note.empty()) a.text += fmt::format("  note: {}\n", r->note);
    a.text += fmt::format("  source: {}\n", r->source);
    a.data["releases"].push_back({{"versions", versions}, {"builds", builds}, {"sm_min", opt_json(r->sm_min)},
                                  {"sm_max", opt_json(r->sm_max)}, {"source", r->source}});
  }
  if (a.data["releases"].empty()) {
    a.found = false;
    a.text = fmt::format("cuDNN {}: no support-matrix row in the data\n", version.str());
  } else {
    a.text += fmt::format("Compatibility: same major; runtime minor >= the application's; patch releases "
                          "interchangeable (source: {})\n", m.cudnn_compatibility_source());
  }
  return a;
}

// The releases the framework's rows describe, each once, in the data's order ("current": the docs' table today).
std::vector<std::string> framework_releases(const Matrix& m, const std::string& name) {
  std::vector<std::string> out;
  for (const FrameworkRow* r : m.frameworks_matching(name, ""))
    if (std::ranges::find(out, r->version) == out.end()) out.push_back(r->version);
  return out;
}

Answer answer_framework(const Matrix& m, const std::string& given, const std::string& version) {
  Answer a;
  std::string name = Matrix::framework_name(given);
  a.data["question"] = "framework";
  a.data["framework"] = name;
  a.data["version"] = version;
  a.data["rows"] = json::array();
  for (const FrameworkRow* r : m.frameworks_matching(name, version)) {
    a.text += fmt::format("{} {}{}: CUDA {}, cuDNN {}{}{}\n", r->framework, r->version,
                          r->variant.empty() ? "" : " " + r->variant, r->cuda, r->cudnn,
                          r->python.empty() ? "" : ", Python " + r->python, status_note(r->status));
    if (!r->note.empty()) a.text += fmt::format("  note: {}\n", r->note);
    a.text += fmt::format("  source: {}\n", r->source);
    a.data["rows"].push_back({{"framework", r->framework}, {"version", r->version}, {"variant", r->variant},
                              {"cuda", r->cuda}, {"cudnn", r->cudnn}, {"python", r->python},
                              {"note", r->note}, {"status", to_string(r->status)}, {"source", r->source}});
  }
  if (a.data["rows"].empty()) {
    a.found = false;
    std::vector<std::string> releases = framework_releases(m, name);
    a.text = releases.empty()
                 ? fmt::format("{} {}: no rows in the data (known: tensorflow, pytorch, jax, cupy, onnxruntime)\n", given, version)
                 : fmt::format("{} {}: no row for this release; the data's {} rows are for {} (depscan matrix framework {} "
                               "lists them)\n", given, version, name, fmt::join(releases, ", "), given);
  }
  return a;
}

Answer answer_gpu(const Matrix& m, const std::string& text) {
  Answer a;
  a.data["question"] = "gpu";
  a.data["gpu"] = text;
  auto match = m.gpu(text);
  if (!match) {
    a.found = false;
    a.text = fmt::format("{}: unknown GPU name\n", text);
    return a;
  }
  std::string source = match->row ? match->row->source : "given as a compute capability";
  a.text = fmt::format("{}: compute capability {} (sm_{}), matched '{}'{}\n  source: {}\n", text, match->cc.str(),
                       match->sm(), match->name, match->row ? status_note(match->row->status) : "", source);
  a.data["cc"] = match->cc.str();
  a.data["sm"] = match->sm();
  a.data["matched"] = match->name;
  a.data["source"] = source;
  std::string toolkits;
  for (const ArchitectureRow& row : m.architectures()) {
    bool has = std::find(row.sm.begin(), row.sm.end(), std::to_string(match->sm())) != row.sm.end();
    toolkits += fmt::format("{}CUDA {}: {}", toolkits.empty() ? "" : "; ", row.toolkit.str(), has ? "SASS" : "no SASS");
  }
  a.text += fmt::format("  toolkits that compile SASS for it: {}\n", toolkits);
  return a;
}

Expected<Answer> answer(const Matrix& m, const std::vector<std::string>& words) {
  if (words.empty()) return Error{"ask one of: driver CUDA_VERSION, toolkit CUDA_VERSION, cudnn VERSION, framework NAME [VERSION], gpu NAME"};
  const std::string& topic = words[0];
  if (topic == "driver" || topic == "toolkit") {
    auto v = version_arg(words, 1, "CUDA version");
    if (!v) return Error{v.error()};
    return topic == "driver" ? answer_driver(m, *v) : answer_toolkit(m, *v);
  }
  if (topic == "cudnn") {
    auto v = version_arg(words, 1, "cuDNN version");
    if (!v) return Error{v.error()};
    return answer_cudnn(m, *v);
  }
  if (topic == "framework") {
    if (words.size() < 2) return Error{"missing framework name (tensorflow, pytorch, jax, cupy, onnxruntime)"};
    return answer_framework(m, words[1], words.size() > 2 ? words[2] : "");
  }
  if (topic == "gpu") {
    if (words.size() < 2) return Error{"missing GPU name"};
    std::string name;
    for (size_t i = 1; i < words.size(); ++i) name += (i > 1 ? " " : "") + words[i];
    return answer_gpu(m, name);
  }
  return Error{fmt::format("unknown question '{}': ask driver, toolkit, cudnn, framework or gpu", topic)};
}

int run(const MatrixArgs& args) {
  auto matrix = args.matrix_path ? load_matrix_file(*args.matrix_path) : load_embedded_matrix();
  if (!matrix) {
    fmt::print(stderr, "depscan: error: {}\n", one_line(matrix.error()));
    return kExitUsage;
  }
  auto result = answer(*matrix, args.words);
  if (!result) {
    fmt::print(stderr, "depscan matrix: {}\n", one_line(result.error()));
    return kExitUsage;
  }
  result->data["found"] = result->found;
  std::string out = args.format == "json" ? json_text(result->data) : terminal_safe(result->text, false);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return result->found ? kExitClean : kExitFindings;
}

}  // namespace

void add_matrix_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<MatrixArgs>();
  CLI::App* cmd = app.add_subcommand(
      "matrix", "answer from the CUDA/cuDNN/framework data: driver 12.4 | toolkit 13.0 | cudnn 9.1 | "
                "framework tensorflow 2.15 | gpu H100");
  cmd->add_option("question", args->words, "the topic and its arguments")->required();
  cmd->add_option("--format", args->format, "output format")->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("--matrix", args->matrix_path, "replace the embedded data with this matrix file")
      ->check(CLI::ExistingFile);
  cmd->callback([args, &exit_code] {
    exit_code = run(*args);
  });
}

}  // namespace depscan::cli
