#include "analyzer/check/gpu_targets.h"

#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "matrix/embedded.h"
#include "matrix/matrix.h"

namespace depscan {
namespace {

struct PtxRelease {
  Version isa;
  CudaVersion cuda;
};

// matrix/data/gpu_code.json, read once. Rows that do not parse are left out (the tests check
// that every row does).
const std::vector<PtxRelease>& ptx_releases() {
  static const std::vector<PtxRelease> releases = [] {
    std::vector<PtxRelease> out;
    auto doc = nlohmann::json::parse(embedded_file("gpu_code.json"), nullptr, false);
    if (doc.is_discarded() || !doc.contains("ptx_isa") || !doc["ptx_isa"].is_array()) return out;
    for (const auto& row : doc["ptx_isa"]) {
      if (!row.is_object() || !row.value("isa", nlohmann::json()).is_string() ||
          !row.value("cuda", nlohmann::json()).is_string())
        continue;
      auto isa = Version::parse(row["isa"].get<std::string>());
      auto cuda = Version::parse(row["cuda"].get<std::string>());
      if (isa && cuda) out.push_back({*isa, {cuda->major(), cuda->minor()}});
    }
    return out;
  }();
  return releases;
}

// "sm_90a" / "compute_120f" -> "90" / "120": the matrix knows sm numbers, not target names.
std::string_view strip_target_name(std::string_view text) {
  for (std::string_view prefix : {"sm_", "compute_"}) {
    if (!text.starts_with(prefix)) continue;
    text.remove_prefix(prefix.size());
    if (!text.empty() && (text.back() == 'a' || text.back() == 'f')) text.remove_suffix(1);
    return text;
  }
  return text;
}

}  // namespace

std::string ComputeCapability::str() const { return fmt::format("{}.{}", major, minor); }
std::string CudaVersion::str() const { return fmt::format("{}.{}", major, minor); }

std::optional<ComputeCapability> compute_capability_of(const Matrix& matrix, std::string_view gpu) {
  std::string_view text = strip_target_name(gpu);
  if (text.empty()) return std::nullopt;
  auto match = matrix.gpu(text);
  if (!match || match->cc.parts.empty()) return std::nullopt;
  return ComputeCapability{match->cc.major(), match->cc.minor()};
}

std::optional<CudaVersion> cuda_version_for_ptx_isa(int major, int minor) {
  for (const PtxRelease& r : ptx_releases())
    if (r.isa == Version{{major, minor}}) return r.cuda;
  return std::nullopt;
}

std::optional<CudaVersion> newest_cuda_before_ptx_isa(int major, int minor) {
  const PtxRelease* newest = nullptr;
  for (const PtxRelease& r : ptx_releases())
    if (!newest || newest->isa < r.isa) newest = &r;
  if (!newest || !(newest->isa < Version{{major, minor}})) return std::nullopt;
  return newest->cuda;
}

std::optional<CudaVersion> cuda_version_of_driver(const Matrix& matrix, std::string_view driver) {
  auto version = Version::parse(driver);
  if (!version) return std::nullopt;
  if (version->major() < 100) {  // a CUDA version, e.g. "13.0"
    if (version->parts.size() < 2) return std::nullopt;
    return CudaVersion{version->major(), version->minor()};
  }
  const DriverRow* row = matrix.newest_toolkit_for_driver(*version, Platform::Linux);
  if (!row) return std::nullopt;
  return CudaVersion{row->toolkit.major(), row->toolkit.minor()};
}

std::string minimum_driver_for(const Matrix& matrix, CudaVersion cuda) {
  const DriverRow* best = nullptr;
  for (const DriverRow& row : matrix.drivers()) {
    if (!row.linux_driver || row.toolkit < Version{{cuda.major, cuda.minor}}) continue;
    if (!best || row.toolkit < best->toolkit) best = &row;
  }
  return best ? best->linux_driver->str() : "";
}

}  // namespace depscan
