#include "analyzer/check/torch_build.h"

#include <algorithm>

#include <fmt/format.h>

#include "matrix/matrix.h"

namespace depscan {
namespace {

// The quoted value's major.minor ('12.8'), by the matrix's own version parser.
std::optional<GpuVersion> major_minor(std::string_view after_quote) {
  auto version = Version::parse(after_quote.substr(0, after_quote.find_first_of("'\"")));
  if (!version || version->parts.size() < 2) return std::nullopt;
  return GpuVersion{version->major(), version->minor()};
}

std::string_view trimmed(std::string_view text) {
  text = text.substr(0, text.find('#'));
  while (!text.empty() && (text.back() == ' ' || text.back() == '\r' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

}  // namespace

VersionValue version_line(const std::string& file_text, std::string_view key) {
  for (size_t at = 0; at < file_text.size();) {
    size_t line_end = std::min(file_text.find('\n', at), file_text.size());
    std::string_view line = trimmed(std::string_view(file_text.data() + at, line_end - at));
    at = line_end + 1;
    if (!line.starts_with(key) || line.size() <= key.size() || std::string_view(" :=").find(line[key.size()]) == std::string_view::npos)
      continue;
    size_t quote = line.find_first_of("'\"");
    if (quote == std::string_view::npos) return {line.ends_with("None"), false, std::nullopt};
    return {false, true, major_minor(line.substr(quote + 1))};
  }
  return {};
}

// The torch installed next to the distribution, else any.
const Distribution* torch_for(const std::vector<Distribution>& dists, const Distribution& user) {
  const Distribution* any = nullptr;
  for (const Distribution& d : dists) {
    if (normalize_dist_name(d.name) != "torch") continue;
    if (d.site_packages == user.site_packages) return &d;
    if (!any) any = &d;
  }
  return any;
}

TorchBuild torch_build(const Distribution* torch, const FileSystem& fs) {
  TorchBuild out;
  out.dist = torch;
  if (!torch) return out;
  for (const std::string& file : torch->files)
    if (relative_to_site_packages(*torch, file) == "torch/version.py") out.version_file = file;
  if (out.version_file.empty()) return out;
  auto text = fs.read_text(out.version_file, 1 << 16);
  if (!text) return out;
  out.cuda = version_line(*text, "cuda");
  out.hip = version_line(*text, "hip");
  out.xpu = version_line(*text, "xpu");
  return out;
}

std::string TorchBuild::named() const {
  return fmt::format("torch {} (torch.version.cuda {}, {})", dist->version,
                     cuda.value ? fmt::format("{}.{}", cuda.value->first, cuda.value->second) : "None", version_file);
}

}  // namespace depscan
