// Summaries of the device code listing (model.h: CudaCode).
#include <algorithm>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "analyzer/model.h"

namespace depscan {
namespace {

std::vector<std::string> targets_of(const CudaCode& code, CudaImageKind kind) {
  std::set<std::tuple<uint32_t, char>> archs;
  for (const CudaImage& image : code.images)
    if (image.kind == kind) archs.insert({image.arch, image.variant});
  std::vector<std::string> out;
  for (auto [arch, variant] : archs) {
    CudaImage probe;
    probe.kind = kind;
    probe.arch = arch;
    probe.variant = variant;
    out.push_back(cuda_target_name(probe));
  }
  return out;
}

}  // namespace

std::string cuda_target_name(const CudaImage& image) {
  std::string suffix = image.variant ? std::string(1, image.variant) : "";
  switch (image.kind) {
    case CudaImageKind::Sass: return fmt::format("sm_{}{}", image.arch, suffix);
    case CudaImageKind::Ptx: return fmt::format("compute_{}{}", image.arch, suffix);
    case CudaImageKind::Other: break;
  }
  return fmt::format("kind{}_{}{}", image.raw_kind, image.arch, suffix);
}

std::vector<std::string> CudaCode::sass_targets() const { return targets_of(*this, CudaImageKind::Sass); }

std::vector<std::string> CudaCode::ptx_targets() const { return targets_of(*this, CudaImageKind::Ptx); }

std::vector<std::string> CudaCode::ptx_isas() const {
  std::set<std::pair<uint16_t, uint16_t>> versions;
  for (const CudaImage& image : images)
    if (image.kind == CudaImageKind::Ptx) versions.insert({image.version_major, image.version_minor});
  std::vector<std::string> out;
  for (auto [major, minor] : versions) out.push_back(fmt::format("{}.{}", major, minor));
  return out;
}

std::string cuda_code_summary(const CudaCode& code) {
  auto sass = code.sass_targets(), ptx = code.ptx_targets();
  std::string text = sass.empty() ? "no SASS" : fmt::format("SASS {}", fmt::join(sass, " "));
  text += ptx.empty() ? ", no PTX" : fmt::format(", PTX {} (ISA {})", fmt::join(ptx, " "), fmt::join(code.ptx_isas(), " "));
  if (code.ptx_only_relocatable()) text += " pre-link only (-rdc)";
  return text;
}

bool CudaCode::ptx_only_relocatable() const {
  bool any_ptx = false;
  for (const CudaImage& image : images) {
    if (image.kind != CudaImageKind::Ptx) continue;
    if (image.section != "__nv_relfatbin") return false;
    any_ptx = true;
  }
  return any_ptx;
}

}  // namespace depscan
