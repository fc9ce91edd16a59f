// The probe's own copies of CUDA's and cuDNN's result numbering, checked against the headers the
// toolkit installs (cuda.h, cudnn_graph.h): a wrong number names the wrong error on a real GPU.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>

#include "toolchains.h"
#include "loader/cuda_driver_api.h"
#include "loader/cudnn_api.h"

namespace {

// NAME = number pairs of the enum whose typedef ends with `type_name` in `header`.
std::map<std::string, int> enum_values(const std::string& header, const std::string& type_name) {
  std::ifstream in(header);
  std::stringstream text;
  text << in.rdbuf();
  std::string all = text.str();
  size_t end = all.find("} " + type_name + ";");
  size_t begin = all.rfind("typedef enum", end);
  std::map<std::string, int> values;
  if (end == std::string::npos || begin == std::string::npos) return values;
  std::string body = all.substr(begin, end - begin);
  static const std::regex entry(R"((CUDA_ERROR_\w+|CUDNN_STATUS_\w+)\s+(?:CUDNN_DEPRECATED_ENUM\s*)?=\s*(\d+))");
  for (auto it = std::sregex_iterator(body.begin(), body.end(), entry); it != std::sregex_iterator(); ++it)
    values[(*it)[1]] = std::stoi((*it)[2]);
  return values;
}

// The header's values, or nothing (with a note) on a machine without the toolkit.
std::optional<std::map<std::string, int>> installed_enum(const std::string& header, const std::string& type_name) {
  if (!depscan::test::present_or_skip(std::filesystem::exists(header), header)) return std::nullopt;
  return enum_values(header, type_name);
}

}  // namespace

TEST_CASE("the CUresult numbers the probe names are cuda.h's") {
  auto header = installed_enum("/usr/local/cuda/include/cuda.h", "CUresult");
  if (!header) return;
  REQUIRE(header->size() > 50);
  using namespace depscan::cuda;
  for (CUresult result : {kErrorNotInitialized, kErrorStubLibrary, kErrorCallRequiresNewerDriver, kErrorDeviceUnavailable,
                          kErrorNoDevice, kErrorNoBinaryForGpu, kErrorInvalidPtx, kErrorJitCompilerNotFound,
                          kErrorUnsupportedPtxVersion, kErrorJitCompilationDisabled, kErrorSystemDriverMismatch,
                          kErrorCompatNotSupportedOnDevice}) {
    CAPTURE(result);
    std::string described = describe_cuda_error(DriverApi{}, result);  // no driver: the name is the probe's own
    std::string name = described.substr(0, described.find(' '));
    REQUIRE(header->count(name) == 1);
    CHECK(header->at(name) == result);
  }
}

TEST_CASE("cuDNN 9's status names are cudnn_graph.h's, every one of them") {
  auto header = installed_enum("/usr/local/cuda/include/cudnn_graph.h", "cudnnStatus_t");
  if (!header) return;
  REQUIRE(header->size() > 30);
  for (const auto& [name, value] : *header) {
    CAPTURE(name);
    CHECK(depscan::cudnn::status_name(9, value) == name);
  }
}
