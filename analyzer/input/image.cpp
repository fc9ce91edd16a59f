#include "analyzer/input/image.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "analyzer/input/fs.h"

namespace depscan {
namespace {

constexpr const char* kOpaque = ".wh..wh..opq";
constexpr const char* kWhiteoutPrefix = ".wh.";

Finding image_finding(const char* code, Severity severity, const std::string& display, const std::string& message) {
  return {code, severity, std::nullopt, fmt::format("{}: {}", display, message), "", display};
}

// The outer archive: regular files written to staging, symlinks remembered by name.
struct Staged {
  std::map<std::string, std::string> symlinks;
  bool has(const std::string& name) const { return files.count(name) > 0; }
  std::map<std::string, bool> files;
};

Staged stage_outer(ArchiveReader& reader, SafeTree& staging) {
  Staged staged;
  while (auto member = reader.next()) {
    if (member->kind == MemberKind::Symlink) {
      staged.symlinks[member->name] = member->link_target;
    } else if (member->kind == MemberKind::File) {
      auto written = reader.extract(staging, member->name);
      if (written && *written) staged.files[member->name] = true;
    }
  }
  return staged;
}

// Follows symlinks of the outer archive by name (old docker save links identical layers).
std::optional<std::string> resolve_staged(const Staged& staged, std::string name) {
  for (int hops = 0; hops < 8; ++hops) {
    if (staged.has(name)) return name;
    auto link = staged.symlinks.find(name);
    if (link == staged.symlinks.end() || !link_stays_inside(name, link->second)) return std::nullopt;
    std::string dir = dirname_of("/" + name);
    name = normalize_path(join_path(dir, link->second)).substr(1);
  }
  return std::nullopt;
}

Expected<nlohmann::json> read_json(SafeTree& staging, const std::string& name) {
  auto text = make_real_fs()->read_text(staging.host_path(name), 16 << 20);
  if (!text) return Error{fmt::format("{}: {}", name, text.error())};
  auto json = nlohmann::json::parse(*text, nullptr, false);
  if (json.is_discarded()) return Error{fmt::format("{}: not valid JSON", name)};
  return json;
}

std::string blob_path(const std::string& digest) {
  size_t colon = digest.find(':');
  if (colon == std::string::npos) return "";
  return fmt::format("blobs/{}/{}", digest.substr(0, colon), digest.substr(colon + 1));
}

// "os/architecture[/variant]" of an index entry; empty when it names none (a single-image layout).
std::string platform_of(const nlohmann::json& entry) {
  if (!entry.contains("platform")) return "";
  const auto& p = entry.at("platform");
  std::string name = p.value("os", "") + "/" + p.value("architecture", "");
  if (p.contains("variant")) name += "/" + p.at("variant").get<std::string>();
  return name;
}

// `wanted` ("linux/arm64") matches an entry of that os and architecture, of any variant unless it
// names one. Attestations (platform unknown/unknown) and other platforms are passed over.
bool platform_matches(const std::string& entry, const std::string& wanted) {
  return entry == wanted || entry.starts_with(wanted + "/");
}

// The entry of an image index for `platform`: the first entry that names it, else the first that
// names no platform; an error listing the platforms the index has when none fits.
Expected<const nlohmann::json*> pick_manifest(const nlohmann::json& entries, const std::string& platform) {
  if (!entries.is_array() || entries.empty()) return Error{"index.json lists no manifest"};
  const nlohmann::json* unnamed = nullptr;
  std::vector<std::string> others;
  for (const auto& entry : entries) {
    std::string name = platform_of(entry);
    if (name.empty() && !unnamed) unnamed = &entry;
    else if (platform_matches(name, platform)) return &entry;
    else if (!name.empty() && name != "unknown/unknown") others.push_back(name);
  }
  if (unnamed) return unnamed;
  return Error{fmt::format("the image index has no manifest for {} (it has {}); --platform picks one", platform,
                           others.empty() ? std::string("none") : fmt::format("{}", fmt::join(others, ", ")))};
}

// Layer member names, in order, from manifest.json (docker save) or index.json (OCI layout).
Expected<std::vector<std::string>> layer_list(SafeTree& staging, const Staged& staged, const std::string& platform) {
  std::vector<std::string> layers;
  try {
    if (staged.has("manifest.json")) {
      auto manifest = read_json(staging, "manifest.json");
      if (!manifest) return Error{manifest.error()};
      if (!manifest->is_array() || manifest->empty()) return Error{"manifest.json lists no image"};
      for (const auto& layer : (*manifest)[0].at("Layers")) layers.push_back(layer.get<std::string>());
      return layers;
    }
    if (!staged.has("index.json")) return Error{"neither manifest.json (docker save) nor index.json (OCI layout)"};
    auto index = read_json(staging, "index.json");
    if (!index) return Error{index.error()};
    nlohmann::json manifest = *index;
    for (int depth = 0; depth < 4 && manifest.contains("manifests"); ++depth) {
      auto entry = pick_manifest(manifest.at("manifests"), platform);
      if (!entry) return Error{entry.error()};
      auto name = resolve_staged(staged, blob_path((*entry)->at("digest").get<std::string>()));
      if (!name) return Error{fmt::format("the manifest blob for {} named by index.json is missing", platform)};
      auto next = read_json(staging, *name);
      if (!next) return Error{next.error()};
      manifest = *next;
    }
    for (const auto& layer : manifest.at("layers")) layers.push_back(blob_path(layer.at("digest").get<std::string>()));
    return layers;
  } catch (const nlohmann::json::exception& e) {
    return Error{fmt::format("unexpected image manifest layout ({})", e.what())};
  }
}

void apply_whiteouts(ArchiveReader& reader, SafeTree& rootfs, const std::string& display, std::vector<Finding>& findings) {
  while (auto member = reader.next()) {
    std::string leaf = basename_of("/" + member->name);
    if (leaf.rfind(kWhiteoutPrefix, 0) != 0) continue;
    std::string dir = dirname_of("/" + member->name).substr(1);
    std::string hidden = leaf.substr(std::string_view(kWhiteoutPrefix).size());
    if (leaf == kOpaque) {
      rootfs.clear_directory(dir);
    } else if (hidden.empty() || hidden == "." || hidden == "..") {  // would hide a directory above it
      findings.push_back(image_finding("archive-unsafe-member", Severity::Error, display,
                                       fmt::format("whiteout '{}' names no file of its directory: ignored", member->name)));
    } else {
      rootfs.remove(dir.empty() ? hidden : dir + "/" + hidden);
    }
  }
}

void apply_entries(ArchiveReader& reader, SafeTree& rootfs, const std::string& display, std::vector<Finding>& findings) {
  while (auto member = reader.next()) {
    if (basename_of("/" + member->name).rfind(kWhiteoutPrefix, 0) == 0) continue;
    Expected<bool> done = true;
    switch (member->kind) {
      case MemberKind::Directory: done = rootfs.make_dirs(member->name); break;
      case MemberKind::File: done = reader.extract(rootfs, member->name); break;
      case MemberKind::Hardlink: done = rootfs.make_hardlink(member->link_target, member->name); break;
      case MemberKind::Symlink:
        if (!link_stays_inside(member->name, member->link_target) && !member->link_target.empty() &&
            member->link_target.front() != '/')
          findings.push_back(image_finding("archive-unsafe-link", Severity::Warning, display,
                                           fmt::format("symbolic link '{}' -> '{}' climbs above the image root: "
                                                       "resolved inside the image, as in a container", member->name,
                                                       member->link_target)));
        done = rootfs.make_symlink(member->name, member->link_target);
        break;
      case MemberKind::Other: break;  // devices and FIFOs are never created
    }
    if (!done && !reader.failed())
      findings.push_back(image_finding("archive-unsafe-member", Severity::Error, display,
                                       fmt::format("'{}': {}: not extracted", member->name, done.error())));
  }
}

}  // namespace

std::string host_image_platform() {
#if defined(__x86_64__)
  return "linux/amd64";
#elif defined(__aarch64__)
  return "linux/arm64";
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  return "linux/ppc64le";
#elif defined(__s390x__)
  return "linux/s390x";
#elif defined(__riscv) && __riscv_xlen == 64
  return "linux/riscv64";
#else
  return "linux/amd64";
#endif
}

bool is_image_archive(const std::string& host_path) {
  ArchiveLimits limits;
  limits.report_duplicates = false;
  auto reader = ArchiveReader::open(host_path, host_path, limits);
  if (!reader) return false;
  for (int i = 0; i < 100000; ++i) {
    auto member = (*reader)->next();
    if (!member) return false;
    if (member->name == "manifest.json" || member->name == "index.json" || member->name == "oci-layout") return true;
  }
  return false;
}

ImageUnpack unpack_image(const std::string& host_path, const std::string& display, SafeTree& staging,
                         SafeTree& rootfs, const std::string& platform, const ArchiveLimits& limits) {
  ImageUnpack out;
  ArchiveLimits outer_limits = limits;  // a layer is one member of the outer archive: only the total caps it
  outer_limits.max_member_bytes = std::max(limits.max_member_bytes, limits.max_total_bytes);
  auto outer = ArchiveReader::open(host_path, display, outer_limits);
  if (!outer) {
    out.findings.push_back(image_finding("archive-corrupt", Severity::Error, display, outer.error()));
    return out;
  }
  Staged staged = stage_outer(**outer, staging);
  for (Finding& f : (*outer)->findings()) out.findings.push_back(std::move(f));
  auto layers = layer_list(staging, staged, platform);
  if (!layers) {
    out.findings.push_back(image_finding("image-invalid", Severity::Error, display, layers.error()));
    return out;
  }
  ArchiveLimits layer_limits = limits;
  layer_limits.report_duplicates = false;  // a later entry of a layer replaces an earlier one
  for (const std::string& layer : *layers) {
    auto safe = safe_relative_name(layer);
    auto name = safe ? resolve_staged(staged, *safe) : std::nullopt;
    std::string layer_display = fmt::format("{} layer {} ({})", display, out.layers + 1, layer);
    if (!name) {
      out.findings.push_back(image_finding("image-invalid", Severity::Error, display,
                                           fmt::format("layer '{}' is missing or outside the archive", layer)));
      continue;
    }
    for (int pass = 0; pass < 2; ++pass) {  // whiteouts hide the lower layers only, then entries
      auto reader = ArchiveReader::open(staging.host_path(*name), layer_display, layer_limits);
      if (!reader) {
        out.findings.push_back(image_finding("archive-corrupt", Severity::Error, layer_display, reader.error()));
        break;
      }
      if (pass == 0) apply_whiteouts(**reader, rootfs, layer_display, out.findings);
      else apply_entries(**reader, rootfs, layer_display, out.findings);
      if (pass == 1 || (*reader)->failed())
        for (Finding& f : (*reader)->findings()) out.findings.push_back(std::move(f));
      if ((*reader)->failed()) break;
    }
    ++out.layers;
  }
  out.ok = true;
  return out;
}

}  // namespace depscan
