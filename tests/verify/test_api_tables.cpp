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

// Each CUresult of cuda.h with the doc comment written above it.
std::map<int, std::string> cuda_error_comments(const std::string& header) {
  std::ifstream in(header);
  std::stringstream text;
  text << in.rdbuf();
  std::string all = text.str();
  size_t end = all.find("} CUresult;");
  size_t begin = all.rfind("typedef enum", end);
  std::map<int, std::string> comments;
  if (end == std::string::npos || begin == std::string::npos) return comments;
  std::string body = all.substr(begin, end - begin);
  static const std::regex entry(R"(CUDA_ERROR_\w+\s*=\s*(\d+))");
  size_t previous = 0;
  for (auto it = std::sregex_iterator(body.begin(), body.end(), entry); it != std::sregex_iterator(); ++it) {
    size_t at = static_cast<size_t>(it->position());
    comments[std::stoi((*it)[1])] = body.substr(previous, at - previous);
    previous = at + static_cast<size_t>(it->length());
  }
  return comments;
}

}  // namespace

TEST_CASE("the sticky CUDA errors are the ones cuda.h says end all CUDA work in the process") {
  const std::string header = "/usr/local/cuda/include/cuda.h";
  if (!depscan::test::present_or_skip(std::filesystem::exists(header), header)) return;
  auto comments = cuda_error_comments(header);
  REQUIRE(comments.size() > 50);
  using depscan::cuda::StickyScope;
  int process_wide = 0;
  for (const auto& [value, comment] : comments) {
    CAPTURE(value);
    std::string flat = std::regex_replace(comment, std::regex(R"([\s*]+)"), " ");
    bool relaunch = flat.find("process must be terminated and relaunched") != std::string::npos;
    bool context_lost = flat.find("context cannot be used anymore") != std::string::npos;
    StickyScope expected = relaunch ? StickyScope::Process : context_lost ? StickyScope::Context : StickyScope::None;
    CHECK(depscan::cuda::sticky_scope(value) == expected);
    process_wide += relaunch;
  }
  CHECK(process_wide >= 12);  // 226, 700, 702, 714-719, 721, 810, 911 in CUDA 13.0
  CHECK(depscan::cuda::sticky_scope(depscan::cuda::kErrorAssert) == StickyScope::Context);
}

TEST_CASE("the CUresult numbers the probe names are cuda.h's") {
  auto header = installed_enum("/usr/local/cuda/include/cuda.h", "CUresult");
  if (!header) return;
  REQUIRE(header->size() > 50);
  using namespace depscan::cuda;
  for (CUresult result : {kErrorNotInitialized, kErrorStubLibrary, kErrorCallRequiresNewerDriver, kErrorDeviceUnavailable,
                          kErrorNoDevice, kErrorNoBinaryForGpu, kErrorInvalidPtx, kErrorJitCompilerNotFound,
                          kErrorUnsupportedPtxVersion, kErrorJitCompilationDisabled, kErrorSystemDriverMismatch,
                          kErrorCompatNotSupportedOnDevice, kErrorContained, kErrorIllegalAddress, kErrorLaunchTimeout,
                          kErrorAssert, kErrorHardwareStackError, kErrorIllegalInstruction, kErrorMisalignedAddress,
                          kErrorInvalidAddressSpace, kErrorInvalidPc, kErrorLaunchFailed, kErrorTensorMemoryLeak,
                          kErrorMpsClientTerminated, kErrorExternalDevice}) {
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
