#include "analyzer/check/gpu_targets.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <vector>

#include <fmt/format.h>

namespace depscan {
namespace {

// GPU names -> compute capability. Source: developer.nvidia.com/cuda-gpus and cuda-legacy-gpus,
// as collected in reference/cuda-facts.md 2.2. '#' stands for one digit.
struct NamedGpu {
  std::string_view name;
  ComputeCapability cc;
};
constexpr std::array kGpus = {
    NamedGpu{"K80", {3, 7}},          NamedGpu{"M40", {5, 2}},          NamedGpu{"M60", {5, 2}},
    NamedGpu{"GTX 9##", {5, 2}},      NamedGpu{"P100", {6, 0}},         NamedGpu{"P40", {6, 1}},
    NamedGpu{"P4", {6, 1}},           NamedGpu{"GTX 10##", {6, 1}},     NamedGpu{"V100", {7, 0}},
    NamedGpu{"TITAN V", {7, 0}},      NamedGpu{"T4", {7, 5}},           NamedGpu{"RTX 20##", {7, 5}},
    NamedGpu{"QUADRO RTX", {7, 5}},     NamedGpu{"A100", {8, 0}},         NamedGpu{"A30", {8, 0}},
    NamedGpu{"RTX 30##", {8, 6}},     NamedGpu{"RTX A####", {8, 6}},    NamedGpu{"A10", {8, 6}},
    NamedGpu{"A40", {8, 6}},          NamedGpu{"A16", {8, 6}},          NamedGpu{"A2", {8, 6}},
    NamedGpu{"ORIN", {8, 7}},         NamedGpu{"L4", {8, 9}},           NamedGpu{"L40", {8, 9}},
    NamedGpu{"L40S", {8, 9}},         NamedGpu{"RTX 40##", {8, 9}},     NamedGpu{"RTX 6000 ADA", {8, 9}},
    NamedGpu{"H100", {9, 0}},         NamedGpu{"H200", {9, 0}},         NamedGpu{"GH200", {9, 0}},
    NamedGpu{"B200", {10, 0}},        NamedGpu{"GB200", {10, 0}},       NamedGpu{"B300", {10, 3}},
    NamedGpu{"GB300", {10, 3}},       NamedGpu{"THOR", {11, 0}},        NamedGpu{"JETSON T5000", {11, 0}},
    NamedGpu{"JETSON T4000", {11, 0}}, NamedGpu{"RTX 50##", {12, 0}},   NamedGpu{"RTX PRO", {12, 0}},
    NamedGpu{"GB10", {12, 1}},        NamedGpu{"DGX SPARK", {12, 1}},
};

// PTX ISA version -> the CUDA release that introduced it. Source: the PTX ISA release history as
// used by cuda-python get_minimal_required_cuda_ver_from_ptx_ver (reference/fatbin.md 8.5).
struct PtxRelease {
  int isa_major, isa_minor;
  CudaVersion cuda;
};
constexpr std::array kPtxReleases = {
    PtxRelease{7, 0, {11, 0}}, PtxRelease{7, 1, {11, 1}}, PtxRelease{7, 2, {11, 2}}, PtxRelease{7, 3, {11, 3}},
    PtxRelease{7, 4, {11, 4}}, PtxRelease{7, 5, {11, 5}}, PtxRelease{7, 6, {11, 6}}, PtxRelease{7, 7, {11, 7}},
    PtxRelease{7, 8, {11, 8}}, PtxRelease{8, 0, {12, 0}}, PtxRelease{8, 1, {12, 1}}, PtxRelease{8, 2, {12, 2}},
    PtxRelease{8, 3, {12, 3}}, PtxRelease{8, 4, {12, 4}}, PtxRelease{8, 5, {12, 5}}, PtxRelease{8, 6, {12, 7}},
    PtxRelease{8, 7, {12, 8}}, PtxRelease{8, 8, {12, 9}}, PtxRelease{9, 0, {13, 0}}, PtxRelease{9, 1, {13, 1}},
};

// CUDA toolkit -> minimum Linux x86_64 driver. Source: CUDA Toolkit Release Notes, Table 3
// (13.1 edition), reference/cuda-facts.md 1.1; 13.2 and 13.3 are secondary copies there.
struct DriverFloor {
  CudaVersion cuda;
  std::string_view driver;
};
constexpr std::array kDriverFloors = {
    DriverFloor{{13, 3}, "610.43.02"}, DriverFloor{{13, 2}, "595.45.04"}, DriverFloor{{13, 1}, "590.44.01"},
    DriverFloor{{13, 0}, "580.65.06"}, DriverFloor{{12, 9}, "575.51.03"}, DriverFloor{{12, 8}, "570.26"},
    DriverFloor{{12, 6}, "560.28.03"}, DriverFloor{{12, 5}, "555.42.02"}, DriverFloor{{12, 4}, "550.54.14"},
    DriverFloor{{12, 3}, "545.23.06"}, DriverFloor{{12, 2}, "535.54.03"}, DriverFloor{{12, 1}, "530.30.02"},
    DriverFloor{{12, 0}, "525.60.13"}, DriverFloor{{11, 8}, "520.61.05"}, DriverFloor{{11, 7}, "515.43.04"},
    DriverFloor{{11, 6}, "510.39.01"}, DriverFloor{{11, 5}, "495.29.05"}, DriverFloor{{11, 4}, "470.42.01"},
    DriverFloor{{11, 3}, "465.19.01"}, DriverFloor{{11, 2}, "460.32.03"},
};

std::optional<std::vector<int>> dotted_numbers(std::string_view text) {
  std::vector<int> out;
  size_t i = 0;
  while (i <= text.size()) {
    size_t j = text.find('.', i);
    if (j == std::string_view::npos) j = text.size();
    int value = 0;
    auto [ptr, ec] = std::from_chars(text.data() + i, text.data() + j, value);
    if (ec != std::errc() || ptr != text.data() + j || j == i) return std::nullopt;
    out.push_back(value);
    i = j + 1;
  }
  return out;
}

std::optional<int> whole_number(std::string_view text) {
  int value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// "sm_90", "compute_90a", "90": the sm number, as a capability.
std::optional<ComputeCapability> from_arch_number(std::string_view text) {
  for (std::string_view prefix : {"sm_", "compute_"})
    if (text.starts_with(prefix)) text.remove_prefix(prefix.size());
  if (!text.empty() && (text.back() == 'a' || text.back() == 'f')) text.remove_suffix(1);
  auto number = whole_number(text);
  if (!number || *number < 10 || *number > 999) return std::nullopt;
  return ComputeCapability{*number / 10, *number % 10};
}

std::vector<std::string> name_tokens(std::string_view text) {
  std::vector<std::string> tokens;
  std::string current;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '#') {
      current += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    } else if (!current.empty()) {
      tokens.push_back(std::move(current));
      current.clear();
    }
  }
  if (!current.empty()) tokens.push_back(std::move(current));
  return tokens;
}

bool token_matches(std::string_view pattern, std::string_view token) {
  if (pattern.size() != token.size()) return false;
  for (size_t i = 0; i < pattern.size(); ++i)
    if (pattern[i] == '#' ? !std::isdigit(static_cast<unsigned char>(token[i])) : pattern[i] != token[i]) return false;
  return true;
}

// Number of tokens of the best (longest) name that appears in the input, and its capability.
std::optional<ComputeCapability> from_name(std::string_view text) {
  std::vector<std::string> input = name_tokens(text);
  size_t best_length = 0;
  std::optional<ComputeCapability> best;
  for (const NamedGpu& gpu : kGpus) {
    std::vector<std::string> pattern = name_tokens(gpu.name);
    for (size_t start = 0; start + pattern.size() <= input.size(); ++start) {
      bool all = std::equal(pattern.begin(), pattern.end(), input.begin() + static_cast<long>(start),
                            [](const std::string& p, const std::string& t) { return token_matches(p, t); });
      if (all && pattern.size() > best_length) {
        best_length = pattern.size();
        best = gpu.cc;
      }
    }
  }
  return best;
}

}  // namespace

std::string ComputeCapability::str() const { return fmt::format("{}.{}", major, minor); }
std::string CudaVersion::str() const { return fmt::format("{}.{}", major, minor); }

std::optional<ComputeCapability> compute_capability_of(std::string_view gpu) {
  if (auto dotted = dotted_numbers(gpu); dotted && dotted->size() == 2 && (*dotted)[1] < 10)
    return ComputeCapability{(*dotted)[0], (*dotted)[1]};
  if (auto arch = from_arch_number(gpu)) return arch;
  return from_name(gpu);
}

std::optional<CudaVersion> cuda_version_for_ptx_isa(int major, int minor) {
  for (const PtxRelease& r : kPtxReleases)
    if (r.isa_major == major && r.isa_minor == minor) return r.cuda;
  return std::nullopt;
}

std::optional<CudaVersion> cuda_version_of_driver(std::string_view driver) {
  auto numbers = dotted_numbers(driver);
  if (!numbers || numbers->empty()) return std::nullopt;
  if ((*numbers)[0] < 100) {  // a CUDA version, e.g. "13.0"
    if (numbers->size() < 2) return std::nullopt;
    return CudaVersion{(*numbers)[0], (*numbers)[1]};
  }
  for (const DriverFloor& floor : kDriverFloors)
    if (*numbers >= *dotted_numbers(floor.driver)) return floor.cuda;
  return std::nullopt;
}

std::string minimum_driver_for(CudaVersion cuda) {
  // The table runs newest first: the last row at or above the version is the closest one (12.7,
  // which only named a PTX ISA, takes 12.8's driver).
  std::string found;
  for (const DriverFloor& floor : kDriverFloors)
    if (floor.cuda >= cuda) found = floor.driver;
  return found;
}

}  // namespace depscan
