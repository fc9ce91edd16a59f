#include "analyzer/input/image.h"

#include <algorithm>
#include <cctype>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "analyzer/input/fs.h"
#include "analyzer/input/saved_images.h"
#include "analyzer/util/listing.h"

namespace depscan {
namespace {

constexpr const char* kOpaque = ".wh..wh..opq";
constexpr const char* kWhiteoutPrefix = ".wh.";

Finding image_finding(const char* code, Severity severity, const std::string& display, const std::string& message) {
  return {code, severity, std::nullopt, fmt::format("{}: {}", display, message), "", display};
}

// ArchiveReader::open's errors already name the archive.
Finding opening_failed(const std::string& display, const std::string& error) {
  return {"archive-corrupt", Severity::Error, std::nullopt, error, "", display};
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

constexpr std::string_view kNoImageFor = "the image index has no image for ";

struct Platform {
  std::string os, architecture, variant;
  std::string name() const { return os + "/" + architecture + (variant.empty() ? "" : "/" + variant); }
  bool operator==(const Platform&) const = default;
};

// containerd's normalisation: architecture aliases and default variants (arm64 is v8, arm v7,
// amd64 v1), so that linux/arm64 and linux/arm64/v8 name one platform.
Platform normalized(std::string os, std::string architecture, std::string variant) {
  if (architecture == "x86_64" || architecture == "x86-64") architecture = "amd64";
  else if (architecture == "aarch64") architecture = "arm64";
  else if (architecture == "i386" || architecture == "i686") architecture = "386";
  else if (architecture == "armhf") architecture = "arm", variant = variant.empty() ? "v7" : variant;
  else if (architecture == "armel") architecture = "arm", variant = variant.empty() ? "v6" : variant;
  if (architecture == "arm64" && (variant.empty() || variant == "8")) variant = "v8";
  if (architecture == "arm" && variant.empty()) variant = "v7";
  if (architecture == "amd64" && variant == "v1") variant = "";
  return {std::move(os), std::move(architecture), std::move(variant)};
}

Platform parse_platform(const std::string& text) {
  size_t first = text.find('/'), second = text.find('/', first + 1);
  std::string os = text.substr(0, first);
  std::string architecture = first == std::string::npos ? "" : text.substr(first + 1, second - first - 1);
  std::string variant = second == std::string::npos ? "" : text.substr(second + 1);
  return normalized(os, architecture, variant);
}

enum class EntryKind { Image, Unnamed, Attestation, Malformed };

struct IndexEntry {
  EntryKind kind = EntryKind::Malformed;
  Platform platform;
  std::string digest;
};

// An entry of an image index, its types checked: a malformed entry is passed over, not fatal.
IndexEntry read_entry(const nlohmann::json& entry) {
  IndexEntry out;
  if (!entry.is_object() || !entry.contains("digest") || !entry.at("digest").is_string()) return out;
  out.digest = entry.at("digest").get<std::string>();
  if (!entry.contains("platform")) {
    out.kind = EntryKind::Unnamed;
    return out;
  }
  const auto& p = entry.at("platform");
  auto text = [&](const char* key) { return p.contains(key) && p.at(key).is_string() ? p.at(key).get<std::string>() : ""; };
  if (!p.is_object() || text("os").empty() || text("architecture").empty()) return out;
  out.platform = normalized(text("os"), text("architecture"), text("variant"));
  out.kind = out.platform.os == "unknown" ? EntryKind::Attestation : EntryKind::Image;
  return out;
}

using Entries = std::vector<const nlohmann::json*>;

// The digest of the index entry to follow: the image for `wanted` whose blob the archive holds
// (an image without blob was not saved), else an entry naming no platform (a nested index, or a
// single-image layout), else, when the platform was not asked for, the only image there is.
Expected<std::string> pick_manifest(const Entries& entries, const std::optional<std::string>& wanted,
                                    const Staged& staged) {
  if (entries.empty()) return Error{"index.json lists no manifest"};
  Platform target = parse_platform(wanted.value_or(host_image_platform()));
  std::optional<std::string> unnamed;
  std::vector<IndexEntry> images;
  for (const nlohmann::json* raw : entries) {
    IndexEntry entry = read_entry(*raw);
    if (!resolve_staged(staged, blob_path(entry.digest))) continue;
    if (entry.kind == EntryKind::Image && entry.platform == target) return entry.digest;
    if (entry.kind == EntryKind::Image) images.push_back(std::move(entry));
    else if (entry.kind == EntryKind::Unnamed && !unnamed) unnamed = entry.digest;
  }
  if (unnamed) return *unnamed;
  if (!wanted && images.size() == 1) return images.front().digest;
  std::vector<std::string> names;
  for (const IndexEntry& image : images) names.push_back(image.platform.name());
  return Error{fmt::format("{}{} (it has {}); --platform picks one", kNoImageFor, target.name(),
                           names.empty() ? std::string("none saved") : fmt::format("{}", fmt::join(names, ", ")))};
}

// The layer list to unpack and what was said about the choice.
struct ImageLayers {
  std::vector<std::string> layers;
  std::string config;  // the config's member name ("" when the manifest names none)
  std::vector<Finding> findings;
};

void note_several(const ImagePick& pick, const std::string& display, std::vector<Finding>& findings) {
  if (pick.several.empty()) return;
  Finding f = image_finding("image-several", Severity::Warning, display, pick.several);
  f.fix = "--image NAME audits another; or save one image per archive";
  findings.push_back(std::move(f));
}

Expected<ImageLayers> layers_from_docker_manifest(SafeTree& staging, const ImageChoice& choice, const std::string& display) {
  auto manifest = read_json(staging, "manifest.json");
  if (!manifest) return Error{manifest.error()};
  if (!manifest->is_array() || manifest->empty()) return Error{"manifest.json lists no image"};
  ImageLayers out;
  auto pick = pick_saved_image(images_of_docker_manifest(*manifest), choice.name);
  if (!pick) return Error{pick.error()};
  note_several(*pick, display, out.findings);
  const nlohmann::json& entry = *pick->entries.front();
  const nlohmann::json& layers = entry.at("Layers");  // null: Go's empty slice, an image without layers
  if (!layers.is_array() && !layers.is_null()) return Error{"manifest.json's Layers is not a list of layer names"};
  for (const auto& layer : layers) out.layers.push_back(layer.get<std::string>());
  if (entry.contains("Config") && entry["Config"].is_string()) out.config = entry["Config"].get<std::string>();
  return out;
}

Expected<ImageLayers> layers_from_index(SafeTree& staging, const Staged& staged, const ImageChoice& choice,
                                        const std::string& display) {
  auto index = read_json(staging, "index.json");
  if (!index) return Error{index.error()};
  nlohmann::json manifest = std::move(*index);
  ImageLayers out;
  for (int depth = 0; depth < 4 && manifest.contains("manifests"); ++depth) {
    Entries entries = json_elements(manifest.at("manifests"));
    if (depth == 0 && !entries.empty()) {  // the images saved together
      auto pick = pick_saved_image(images_of_index(manifest.at("manifests")), choice.name);
      if (!pick) return Error{pick.error()};
      note_several(*pick, display, out.findings);
      entries = pick->entries;
    }
    auto digest = pick_manifest(entries, choice.platform, staged);
    if (!digest) return Error{digest.error()};
    auto next = read_json(staging, *resolve_staged(staged, blob_path(*digest)));
    if (!next) return Error{next.error()};
    manifest = std::move(*next);
  }
  if (manifest.contains("manifests")) return Error{"index.json nests image indexes more than 4 deep, or in a cycle"};
  const nlohmann::json& layers = manifest.at("layers");
  if (!layers.is_array() && !layers.is_null()) return Error{"the image manifest's layers is not a list"};
  for (const auto& layer : layers) out.layers.push_back(blob_path(layer.at("digest").get<std::string>()));
  if (manifest.contains("config") && manifest["config"].is_object() && manifest["config"].contains("digest") &&
      manifest["config"]["digest"].is_string())
    out.config = blob_path(manifest["config"]["digest"].get<std::string>());
  return out;
}

// Layer member names, in order. An OCI index.json chooses by name and platform; a docker save
// also writes manifest.json, naming one platform's image only, which serves when the index cannot
// be followed.
Expected<ImageLayers> layer_list(SafeTree& staging, const Staged& staged, const ImageChoice& choice,
                                 const std::string& display) {
  try {
    if (staged.has("index.json")) {
      auto from_index = layers_from_index(staging, staged, choice, display);
      if (from_index || !staged.has("manifest.json") || from_index.error().starts_with(kNoImageFor) ||
          from_index.error().starts_with(kNoImageNamed))
        return from_index;
    }
    if (staged.has("manifest.json")) return layers_from_docker_manifest(staging, choice, display);
    return Error{"neither manifest.json (docker save) nor index.json (OCI layout)"};
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
      findings.push_back(image_finding(reader.member_corrupt() ? "archive-corrupt" : "archive-unsafe-member", Severity::Error, display,
                                       fmt::format("'{}': {}: not extracted", member->name, done.error())));
  }
}

// Go's strconv.ParseBool, true side: how the toolkit reads NVIDIA_DISABLE_REQUIRE.
bool go_true(const std::string& text) {
  return text == "1" || text == "t" || text == "T" || text == "true" || text == "TRUE" || text == "True";
}

// Dot-separated identifiers of [0-9A-Za-z-], none empty: a semver pre-release or build.
bool semver_identifiers(std::string_view text) {
  if (text.empty() || text.front() == '.' || text.back() == '.' || text.find("..") != std::string_view::npos) return false;
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.'; });
}

// "12.4" of CUDA_VERSION=12.4.1, read as the toolkit reads a legacy image's version (Masterminds
// semver.NewVersion since nvidia-container-toolkit 36e84731: an optional "v", one to three
// numbers, then -pre.release and +build; before it, x/mod/semver's stricter rules).
std::optional<std::string> major_minor_of(const std::string& version) {
  size_t at = version.starts_with("v") ? 1 : 0;
  std::vector<std::string> numbers;
  while (numbers.size() < 3) {
    size_t end = at;
    while (end < version.size() && end - at < 9 && version[end] >= '0' && version[end] <= '9') ++end;
    if (end == at) return std::nullopt;
    numbers.push_back(version.substr(at, end - at));
    at = end;
    if (at >= version.size() || version[at] != '.') break;
    ++at;
  }
  std::string_view rest = std::string_view(version).substr(at);
  size_t plus = rest.find('+');
  std::string_view pre = rest.substr(0, plus), build = plus == std::string_view::npos ? "" : rest.substr(plus + 1);
  bool pre_ok = pre.empty() || (pre.front() == '-' && semver_identifiers(pre.substr(1)));
  bool build_ok = plus == std::string_view::npos || semver_identifiers(build);
  if (!pre_ok || !build_ok) return std::nullopt;
  return std::to_string(std::stoul(numbers[0])) + "." + (numbers.size() > 1 ? std::to_string(std::stoul(numbers[1])) : "0");
}

// The toolkit's "legacy" CUDA image: CUDA_VERSION set, NVIDIA_REQUIRE_CUDA unset or empty.
bool is_legacy_cuda_image(const std::map<std::string, std::string>& settings) {
  auto version = settings.find("CUDA_VERSION");
  auto require_cuda = settings.find("NVIDIA_REQUIRE_CUDA");
  return version != settings.end() && !version->second.empty() &&
         (require_cuda == settings.end() || require_cuda->second.empty());
}

ContainerRequirements requirements_of(const std::map<std::string, std::string>& settings) {
  ContainerRequirements out;
  auto disable = settings.find("NVIDIA_DISABLE_REQUIRE");
  if (disable != settings.end() && go_true(disable->second)) {
    out.disabled = true;
    return out;
  }
  for (const auto& [name, text] : settings)
    if (name.starts_with("NVIDIA_REQUIRE_") && !name.starts_with("NVIDIA_REQUIRE_JETPACK"))
      out.variables.emplace_back(name, text);
  if (is_legacy_cuda_image(settings)) {
    const std::string& version = settings.at("CUDA_VERSION");
    if (auto major_minor = major_minor_of(version)) out.variables.emplace_back("CUDA_VERSION", "cuda>=" + *major_minor);
    else out.legacy_version_error = version;
  }
  return out;
}

// The config an image's manifest names, read for the environment its containers start with.
ImageEnvironment environment_of_image(SafeTree& staging, const Staged& staged, const std::string& config) {
  if (config.empty()) return {};
  auto safe = safe_relative_name(config);
  auto name = safe ? resolve_staged(staged, *safe) : std::nullopt;
  if (!name) return {};
  auto json = read_json(staging, *name);
  return json ? environment_of_config(*json) : ImageEnvironment{};
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
#elif defined(__i386__)
  return "linux/386";
#elif defined(__arm__)
  return "linux/arm/v7";
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

ImageEnvironment environment_of_config(const nlohmann::json& config) {
  ImageEnvironment env;
  if (!config.is_object()) return env;
  env.config_read = true;
  auto inner = config.find("config");
  if (inner == config.end() || !inner->is_object()) return env;
  auto dir = inner->find("WorkingDir");
  if (dir != inner->end() && dir->is_string() && dir->get_ref<const std::string&>().starts_with("/"))
    env.working_dir = dir->get<std::string>();
  auto list = inner->find("Env");
  if (list == inner->end() || !list->is_array()) return env;
  std::map<std::string, std::string> settings;
  for (const nlohmann::json& item : *list) {
    if (!item.is_string()) continue;
    const std::string& setting = item.get_ref<const std::string&>();
    size_t equals = setting.find('=');
    if (equals != std::string::npos) settings[setting.substr(0, equals)] = setting.substr(equals + 1);
  }
  auto value = [&](const char* name) {
    auto it = settings.find(name);
    return it == settings.end() ? std::string() : it->second;
  };
  env.ld_library_path = value("LD_LIBRARY_PATH");
  env.ld_preload = value("LD_PRELOAD");
  env.glibc_tunables = value("GLIBC_TUNABLES");
  env.bind_now = !value("LD_BIND_NOW").empty();
  env.requirements = requirements_of(settings);
  if (auto caps = settings.find("NVIDIA_DRIVER_CAPABILITIES"); caps != settings.end()) env.driver_capabilities = caps->second;
  env.legacy_cuda_image = is_legacy_cuda_image(settings);
  return env;
}

// What the layers of one image may unpack to, together; each layer's reader gets what is left.
struct ImageBudget {
  uint64_t max_bytes;
  size_t max_members;
  uint64_t bytes = 0;
  size_t members = 0;

  ImageBudget(const ArchiveLimits& limits, uint64_t archive_size)
      : max_bytes(std::min(limits.max_total_bytes,
                           std::max(limits.ratio_floor, limits.max_ratio * std::max<uint64_t>(archive_size, 1)))),
        max_members(limits.max_members) {}

  bool allows_another(ArchiveLimits& layer) const {
    if (bytes >= max_bytes || members >= max_members) return false;
    layer.max_total_bytes = max_bytes - bytes;
    layer.max_members = max_members - members;
    return true;
  }
  void charge(const ArchiveReader& layer) {
    bytes += layer.bytes_declared();
    members += layer.members();
  }
};

ImageUnpack unpack_image(const std::string& host_path, const std::string& display, SafeTree& staging,
                         SafeTree& rootfs, const ImageChoice& choice, const ArchiveLimits& limits) {
  ImageUnpack out;
  ArchiveLimits outer_limits = limits;  // a layer is one member of the outer archive: only the total caps it
  outer_limits.max_member_bytes = std::max(limits.max_member_bytes, limits.max_total_bytes);
  outer_limits.duplicate_rule = "the last copy is used, as docker load unpacks it";
  auto outer = ArchiveReader::open(host_path, display, outer_limits);
  if (!outer) {
    out.findings.push_back(opening_failed(display, outer.error()));
    return out;
  }
  Staged staged = stage_outer(**outer, staging);
  for (Finding& f : (*outer)->findings()) out.findings.push_back(std::move(f));
  auto image = layer_list(staging, staged, choice, display);
  if (!image) {
    out.findings.push_back(image_finding("image-invalid", Severity::Error, display, image.error()));
    return out;
  }
  for (Finding& f : image->findings) out.findings.push_back(std::move(f));
  out.environment = environment_of_image(staging, staged, image->config);
  if (!image->config.empty() && !out.environment.config_read)
    out.findings.push_back(image_finding(
        "image-invalid", Severity::Warning, display,
        fmt::format("the config '{}' the manifest names is missing, outside the archive or not a JSON object: the "
                    "environment containers start with (LD_LIBRARY_PATH, LD_PRELOAD, NVIDIA_*) is unknown, and this "
                    "shell's is not used in its place", shortened(image->config))));
  ArchiveLimits layer_limits = limits;
  layer_limits.report_duplicates = false;  // a later entry of a layer replaces an earlier one
  // The caps hold for the image as a whole: one small layer listed a thousand times, or many
  // layers that each stay under the ratio, must not fill the disk.
  ImageBudget budget(limits, (*outer)->archive_size());
  out.layers_listed = image->layers.size();
  for (size_t index = 0; index < image->layers.size(); ++index) {
    const std::string& layer = image->layers[index];
    if (!budget.allows_another(layer_limits)) {
      out.findings.push_back(image_finding(
          "archive-too-large", Severity::Error, display,
          fmt::format("the layers applied so far declare {} in {} members from a {} archive (caps for the whole image: "
                      "{}x the archive size, at least {}, at most {}; {} members): the last {} layers are not applied, "
                      "refused as a probable archive bomb",
                      human_bytes(budget.bytes), budget.members, human_bytes((*outer)->archive_size()), limits.max_ratio,
                      human_bytes(limits.ratio_floor), human_bytes(limits.max_total_bytes), limits.max_members,
                      image->layers.size() - index)));
      break;
    }
    auto safe = safe_relative_name(layer);
    auto name = safe ? resolve_staged(staged, *safe) : std::nullopt;
    std::string layer_display = fmt::format("{} layer {} ({})", display, index + 1, layer);
    if (!name) {
      out.findings.push_back(image_finding("image-invalid", Severity::Error, display,
                                           fmt::format("layer '{}' is missing or outside the archive", layer)));
      continue;
    }
    bool applied = true;
    for (int pass = 0; pass < 2; ++pass) {  // whiteouts hide the lower layers only, then entries
      auto reader = ArchiveReader::open(staging.host_path(*name), layer_display, layer_limits);
      if (!reader) {
        out.findings.push_back(opening_failed(layer_display, reader.error()));
        applied = false;
        break;
      }
      if (pass == 0) apply_whiteouts(**reader, rootfs, layer_display, out.findings);
      else apply_entries(**reader, rootfs, layer_display, out.findings);
      if (pass == 1 || (*reader)->failed()) budget.charge(**reader);
      if (pass == 1 || (*reader)->failed())
        for (Finding& f : (*reader)->findings()) out.findings.push_back(std::move(f));
      if ((*reader)->failed()) {
        applied = false;
        break;
      }
    }
    if (applied) ++out.layers;
  }
  out.ok = true;
  return out;
}

}  // namespace depscan
