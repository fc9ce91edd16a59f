#include "analyzer/input/collect.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analyzer/input/image.h"
#include "analyzer/input/mount_fs.h"
#include "analyzer/input/python_env.h"
#include "analyzer/input/residency.h"
#include "analyzer/input/sniff.h"
#include "analyzer/input/wheel.h"
#include "analyzer/util/listing.h"

namespace depscan {
namespace {

const std::set<std::string> kPseudoFileSystems = {"/proc", "/sys", "/dev", "/run"};

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

Finding input_error(const std::string& input, const std::string& message) {
  return {"input-error", Severity::Error, std::nullopt, fmt::format("{}: {}", input, message), "", input};
}

Finding info(const char* code, const std::string& path, const std::string& message) {
  return {code, Severity::Info, std::nullopt, message, "", path};
}

constexpr unsigned kEtRel = 1, kEtExec = 2, kEtDyn = 3, kEtCore = 4;

// Relocatable objects (.o) and core files are ELF but never loaded: not audited.
bool loadable_elf(const Sniffed& sniffed) {
  return sniffed.format == FileFormat::Elf && (sniffed.elf_type == kEtExec || sniffed.elf_type == kEtDyn);
}

// Why an ELF file given as an input has no dependency tree, or nullopt when the loader could load
// it (or its header is too short to say: the reader reports that).
std::optional<std::string> not_loadable(const Sniffed& sniffed) {
  const std::optional<unsigned>& type = sniffed.elf_type;
  if (!type || *type == kEtExec || *type == kEtDyn) return std::nullopt;
  if (*type == kEtRel)
    return "an ELF relocatable object (ET_REL): the dynamic loader never loads one, so it has no dependency "
           "tree; scan the program or library it is linked into";
  if (*type == kEtCore) return "an ELF core dump (ET_CORE), not a program or library";
  return fmt::format("an ELF file of type {} (e_type): the dynamic loader loads only ET_EXEC and ET_DYN files", *type);
}

// Which binaries a directory audit takes. A Linux Python environment (lib/pythonX.Y/site-packages)
// never loads a PE file: pip's and setuptools' .exe files there are launcher templates.
enum class Binaries { ElfAndPe, ElfOnly };

Binaries binaries_of_environment(const std::string& site_packages) {
  bool posix = site_packages.find("/lib/python") != std::string::npos ||
               site_packages.find("/lib64/python") != std::string::npos;
  return posix ? Binaries::ElfOnly : Binaries::ElfAndPe;
}

void add_root(const std::string& logical, std::unique_ptr<FileSource> file, CollectedInputs& out) {
  out.roots.push_back(logical);
  if (file && out.open_roots.size() < kMaxOpenRoots) out.open_roots.emplace(logical, std::move(file));
}

struct WalkCounts {
  size_t audited = 0, windows_skipped = 0;
  bool stopped = false;  // at the entry limit
  std::string too_deep;  // the first directory not entered for its depth
  std::vector<std::pair<std::string, std::string>> unreadable;  // (path, why): not audited
};

// Errors named one by one before the rest are counted.
constexpr size_t kUnreadableNamed = 20;

// A directory this process may not list (no r: the listing comes back empty) or enter (no x: none
// of what it lists can be opened).
std::optional<std::string> inaccessible(const FileSystem& fs, const std::string& dir, bool listed_nothing) {
  auto host = fs.host_path(dir);
  if (!host) return host.error();
  if (listed_nothing && ::access(host->c_str(), R_OK) != 0)
    return fmt::format("cannot list the directory: {}", std::strerror(errno));
  if (::access(host->c_str(), X_OK) != 0) return fmt::format("cannot search the directory: {}", std::strerror(errno));
  return std::nullopt;
}

// A FIFO, device or socket in a tree holds no binary; a file that cannot be opened is not audited.
void note_unopened(const FileSystem& fs, const std::string& path, const std::string& why, CollectedInputs& out,
                   WalkCounts& counts) {
  auto info = fs.stat(path);
  if (info && info->kind != FileKind::Regular && info->kind != FileKind::Directory) ++out.skipped_files;
  else counts.unreadable.emplace_back(path, why);
}

void report_unreadable(const WalkCounts& counts, CollectedInputs& out) {
  for (size_t i = 0; i < std::min(counts.unreadable.size(), kUnreadableNamed); ++i) {
    const auto& [path, why] = counts.unreadable[i];
    out.unreadable_inputs.push_back(path);
    out.findings.push_back(input_error(path, why + ": not audited"));
  }
  if (counts.unreadable.size() > kUnreadableNamed)
    out.findings.push_back(input_error(counts.unreadable[kUnreadableNamed].first,
                                       fmt::format("and {} more files or directories that cannot be read: not audited",
                                                   counts.unreadable.size() - kUnreadableNamed)));
}

// Deeper than any install or root file system; a hostile archive can nest thousands of levels.
constexpr size_t kMaxWalkDepth = 100;

// Every ELF or PE file under `dir`, sorted, without following symlinks (a link to a file is
// audited through its target; links to directories are not entered, so there are no cycles).
void walk_binaries(const FileSystem& fs, const std::string& dir, Binaries binaries, size_t max_entries,
                   CollectedInputs& out, WalkCounts& counts) {
  size_t& audited = counts.audited;
  std::vector<std::pair<std::string, size_t>> pending = {{dir, 0}};  // a directory and its depth under `dir`
  size_t seen = 0;
  while (!pending.empty() && !counts.stopped) {
    auto [current, depth] = std::move(pending.back());
    pending.pop_back();
    if (depth > kMaxWalkDepth) {
      if (counts.too_deep.empty()) counts.too_deep = current;
      continue;
    }
    auto canonical_dir = fs.canonical(current);
    if (!canonical_dir) continue;
    auto names = fs.list(current);
    if (auto problem = inaccessible(fs, current, names.empty())) {
      counts.unreadable.emplace_back(current, *problem);
      continue;
    }
    std::sort(names.begin(), names.end(), std::greater<>());
    std::vector<std::string> children;
    for (const std::string& name : names) {
      if (++seen > max_entries) {
        counts.stopped = true;
        break;
      }
      std::string child = join_path(current, name);
      auto canon = fs.canonical(child);
      if (!canon || *canon != join_path(*canonical_dir, name)) continue;  // a symlink
      if (kPseudoFileSystems.count(*canon)) continue;
      children.push_back(std::move(child));
    }
    read_heads_ahead(fs, children);
    for (const std::string& child : children) {
      auto opened = sniff_and_keep_open(fs, child);
      if (!opened) {
        note_unopened(fs, child, opened.error(), out, counts);
        continue;
      }
      const Sniffed& sniffed = opened->sniffed;
      if (sniffed.format == FileFormat::Directory) pending.emplace_back(child, depth + 1);
      else if (sniffed.format == FileFormat::Pe && binaries == Binaries::ElfOnly) {
        ++counts.windows_skipped;
        ++out.skipped_files;
      } else if (loadable_elf(sniffed) || sniffed.format == FileFormat::Pe) {
        add_root(child, std::move(opened->file), out);
        ++audited;
      } else ++out.skipped_files;
    }
  }
  std::reverse(out.roots.end() - static_cast<long>(audited), out.roots.end());
  std::sort(out.roots.end() - static_cast<long>(audited), out.roots.end());
}

// How many files it audited. `part_of_environment`: one of a Python environment's site-packages,
// which may hold no binaries when another does (a pure-Python lib/ beside lib64/).
size_t audit_directory(const FileSystem& fs, const std::string& input, const std::string& dir, const CollectRequest& request,
                       CollectedInputs& out, Binaries binaries = Binaries::ElfAndPe, bool part_of_environment = false) {
  size_t skipped_before = out.skipped_files;
  WalkCounts counts;
  walk_binaries(fs, dir, binaries, request.max_walk_entries, out, counts);
  report_unreadable(counts, out);
  if (counts.stopped)
    out.findings.push_back({"directory-too-large", Severity::Warning, std::nullopt,
                            fmt::format("{}: the walk stopped after {} directory entries: the files beyond them are not "
                                        "audited", input, request.max_walk_entries),
                            "audit the subdirectories that hold the binaries one by one", input});
  if (!counts.too_deep.empty())
    out.findings.push_back({"directory-too-large", Severity::Warning, std::nullopt,
                            fmt::format("{}: the walk does not enter directories nested more than {} deep ({}, and any "
                                        "like it): the files there are not audited",
                                        input, kMaxWalkDepth, shortened(counts.too_deep)),
                            "audit the deep subdirectory on its own", input});
  size_t audited = counts.audited;
  if (audited == 0 && !part_of_environment) {  // asked to analyse a directory with nothing in it to analyse
    out.unreadable_inputs.push_back(input);
    out.findings.push_back(input_error(input, fmt::format("no ELF or PE file in this directory ({} other files)",
                                                          out.skipped_files - skipped_before)));
    return 0;
  }
  std::string windows = counts.windows_skipped == 0
                            ? ""
                            : fmt::format(", {} of them Windows PE files a Linux Python environment never loads",
                                          counts.windows_skipped);
  out.findings.push_back(info("directory-audited", dir,
                              fmt::format("{}: {} ELF/PE files audited, {} other files skipped{}", input, audited,
                                          out.skipped_files - skipped_before, windows)));
  return audited;
}

// `venv`: the venv whose interpreter imports these, when they are its base environment's.
void add_environment(const FileSystem& fs, const std::string& site_packages, CollectedInputs& out,
                     const std::string& venv = "") {
  for (Distribution& d : read_distributions(fs, site_packages, out.findings)) {
    d.venv_prefix = venv;
    out.distributions.push_back(std::move(d));
  }
  out.install = true;
}

// ------------------------------------------------------------------ wheels: one install

struct WheelInput {
  std::string input, host;
};

InstallLayout layout_for(const std::vector<WheelInput>& wheels) {
  InstallLayout layout;
  for (const WheelInput& w : wheels) {
    auto name = parse_wheel_file_name(basename_of(w.input));
    if (auto python = name ? python_dir_for_tag(name->python) : std::nullopt) {
      layout.python = *python;
      break;
    }
  }
  layout.site_packages = fmt::format("lib/{}/site-packages", layout.python);
  return layout;
}

void install_wheels(std::unique_ptr<FileSystem>& fs, const std::vector<WheelInput>& wheels, CollectedInputs& out) {
  auto temp = TempDirectory::create("wheels");
  if (!temp) {  // no wheel can be installed
    for (const WheelInput& w : wheels) {
      out.findings.push_back(input_error(w.input, temp.error()));
      out.unreadable_inputs.push_back(w.input);
    }
    return;
  }
  const std::string prefix = (*temp)->path();
  SafeTree tree(prefix);
  InstallLayout layout = layout_for(wheels);
  std::map<std::string, std::string> wheel_of;  // normalised distribution -> wheel file
  for (const WheelInput& w : wheels) {
    WheelInstall installed = install_wheel(w.host, basename_of(w.input), tree, layout);
    for (Finding& f : installed.findings) out.findings.push_back(std::move(f));
    if (!installed.readable) out.unreadable_inputs.push_back(w.input);
    for (const std::string& rel : installed.binary_files) out.roots.push_back(join_path(prefix, rel));
    if (auto name = parse_wheel_file_name(basename_of(w.input))) wheel_of[normalize_dist_name(name->distribution)] = basename_of(w.input);
  }
  fs = make_mount_fs(std::move(fs), {{prefix, prefix}});
  std::string site_packages = join_path(prefix, layout.site_packages);
  size_t first = out.distributions.size();
  add_environment(*fs, site_packages, out);
  for (size_t i = first; i < out.distributions.size(); ++i) {
    Distribution& d = out.distributions[i];
    auto it = wheel_of.find(normalize_dist_name(d.name));
    if (it != wheel_of.end()) d.wheel_file = it->second;
    size_t binary_count = std::count_if(out.roots.begin(), out.roots.end(), [&](const std::string& r) {
      return std::find(d.files.begin(), d.files.end(), r) != d.files.end();
    });
    out.findings.push_back(info("wheel-installed", d.wheel_file,
                                fmt::format("{}: {} {} installs {} ELF/PE files into site-packages (tags: {})",
                                            d.wheel_file.empty() ? d.name : d.wheel_file, d.name, d.version,
                                            binary_count, fmt::join(d.tags, ", "))));
  }
  out.shown_as.emplace_back(site_packages, "site-packages");
  out.shown_as.emplace_back(prefix, "<install prefix>");
  out.temp_dirs.push_back(std::move(*temp));
}

// ------------------------------------------------------------------ images

// "3", or "2 of 3" when a layer could not be applied in full (its findings say why).
std::string layers_applied(const UnpackedImageRoot& unpacked) {
  if (unpacked.layers == unpacked.layers_listed) return std::to_string(unpacked.layers);
  return fmt::format("{} of {}", unpacked.layers, unpacked.layers_listed);
}

void unpack_image_input(std::unique_ptr<FileSystem>& fs, const std::string& input, const std::string& host,
                        const CollectRequest& request, CollectedInputs& out) {
  out.image_input = true;
  UnpackedImageRoot unpacked = unpack_image_root(host, input, request.image);
  for (Finding& f : unpacked.findings) out.findings.push_back(std::move(f));
  if (!unpacked.ok()) {
    out.unreadable_inputs.push_back(input);
    return;
  }
  fs = make_rooted_fs(unpacked.rootfs);
  out.findings.push_back(info("image-unpacked", input,
                              fmt::format("{}: {} layers applied; audited as a root file system{}", input,
                                          layers_applied(unpacked), loader_settings_note(unpacked.environment))));
  out.image_environment = unpacked.environment;
  out.image_display = input;
  audit_directory(*fs, input, "/", request, out);
  out.temp_dirs.push_back(std::move(unpacked.dir));
}

// A compressed archive is unpacked without a first look, which would decompress it twice; a tar is
// looked into (a seek per member) for manifest.json or index.json.
bool unpack_as_image(const std::string& host, bool compressed) { return compressed || is_image_archive(host); }

void collect_one(std::unique_ptr<FileSystem>& fs, const std::string& input, const std::string& logical,
                 const CollectRequest& request, std::vector<WheelInput>& wheels, CollectedInputs& out) {
  bool single_input = request.inputs.size() == 1;
  auto opened = sniff_and_keep_open(*fs, logical);
  if (!opened) {
    out.unreadable_inputs.push_back(input);
    out.findings.push_back(input_error(input, opened.error()));
    return;
  }
  const Sniffed& sniffed = opened->sniffed;
  auto host = fs->host_path(logical);
  switch (sniffed.format) {
    case FileFormat::Elf:
      if (auto why = not_loadable(sniffed)) {
        out.unreadable_inputs.push_back(input);
        out.findings.push_back(input_error(input, *why));
        return;
      }
      add_root(logical, std::move(opened->file), out);
      return;
    case FileFormat::Pe: add_root(logical, std::move(opened->file), out); return;
    case FileFormat::Directory:
      if (looks_like_site_packages(*fs, logical)) {
        add_environment(*fs, logical, out);
        audit_directory(*fs, input, logical, request, out, binaries_of_environment(logical));
      } else {
        audit_directory(*fs, input, logical, request, out);
      }
      return;
    case FileFormat::Tar:
    case FileFormat::Compressed:
      if (host && single_input && unpack_as_image(*host, sniffed.format == FileFormat::Compressed)) {
        unpack_image_input(fs, input, *host, request, out);
        return;
      }
      break;
    default: break;
  }
  if (ends_with(input, ".whl") && host) {
    wheels.push_back({input, *host});
    return;
  }
  out.unreadable_inputs.push_back(input);
  std::string why = sniffed.format == FileFormat::Tar || sniffed.format == FileFormat::Compressed
                        ? fmt::format("a {} that is not a container image (or an image given with other inputs)",
                                      sniffed.format == FileFormat::Tar ? "tar archive" : "compressed file")
                        : fmt::format("not an ELF or PE file, wheel, directory or image ({})", to_string(sniffed.format));
  out.findings.push_back(input_error(input, why));
}

// With --root, a wheel or image given on the command line that is not inside the root is read
// from the host: archives are what gets installed onto the root, not part of it.
bool is_host_archive(const std::string& input) {
  auto host = make_real_fs();
  bool archive_name = false;
  for (const char* suffix : {".whl", ".tar", ".tar.gz", ".tgz", ".tar.zst", ".tar.xz", ".tar.bz2"})
    archive_name = archive_name || ends_with(input, suffix);
  return archive_name && host->is_regular(absolute_path(input));
}

void collect_host_archive(std::unique_ptr<FileSystem>& fs, const std::string& input, const CollectRequest& request,
                          std::vector<WheelInput>& wheels, CollectedInputs& out) {
  std::string host = absolute_path(input);
  bool single_input = request.inputs.size() == 1;
  if (ends_with(input, ".whl")) wheels.push_back({input, host});
  else if (single_input && unpack_as_image(host, !ends_with(input, ".tar"))) unpack_image_input(fs, input, host, request, out);
  else {
    out.unreadable_inputs.push_back(input);
    out.findings.push_back(input_error(input, "a tar archive that is not a container image (or an image given with other inputs)"));
  }
}

// --image and --platform choose among the images of an archive; with no archive they would
// otherwise be ignored without a word (a typo'd input, an image given beside other inputs).
void warn_unused_image_choice(const CollectRequest& request, CollectedInputs& out) {
  if (out.image_input) return;
  std::vector<std::string> given;
  if (request.image.name) given.push_back("--image " + *request.image.name);
  if (request.image.platform) given.push_back("--platform " + *request.image.platform);
  if (given.empty()) return;
  out.findings.push_back({"image-option-unused", Severity::Warning, std::nullopt,
                          fmt::format("{}: no input is a container image archive (one, given alone), so the option "
                                      "was ignored",
                                      fmt::join(given, " and ")),
                          "give the image archive as the only input, or drop the option", ""});
}

}  // namespace

std::string loader_settings_note(const ImageEnvironment& env, std::string_view overrides) {
  if (!env.config_read) return "; its config was not read, so no LD_LIBRARY_PATH or LD_PRELOAD is set";
  std::string set;
  if (!env.ld_library_path.empty()) set += fmt::format(" LD_LIBRARY_PATH={}", env.ld_library_path);
  if (!env.ld_preload.empty()) set += fmt::format(" LD_PRELOAD={}", env.ld_preload);
  if (!env.glibc_tunables.empty()) set += fmt::format(" GLIBC_TUNABLES={}", env.glibc_tunables);
  return set.empty() ? "; its config sets no LD_LIBRARY_PATH or LD_PRELOAD"
                     : fmt::format("; its config sets{}, which a container starts with (unless {} is given here)", set,
                                   overrides);
}

UnpackedImageRoot unpack_image_root(const std::string& host_path, const std::string& display, const ImageChoice& choice) {
  UnpackedImageRoot out;
  auto temp = TempDirectory::create("image");
  if (!temp) {
    out.findings.push_back(input_error(display, temp.error()));
    return out;
  }
  SafeTree top((*temp)->path());
  bool dirs_ok = top.make_dirs("archive") && top.make_dirs("rootfs");
  SafeTree staging(top.host_path("archive")), rootfs(top.host_path("rootfs"));
  ImageUnpack unpacked = dirs_ok ? unpack_image(host_path, basename_of(display), staging, rootfs, choice) : ImageUnpack{};
  out.findings = std::move(unpacked.findings);
  top.remove("archive");  // the layer tars are no longer needed
  if (!unpacked.ok) return out;
  out.rootfs = top.host_path("rootfs");
  out.layers = unpacked.layers;
  out.layers_listed = unpacked.layers_listed;
  out.environment = std::move(unpacked.environment);
  out.dir = std::move(*temp);
  return out;
}

CollectedInputs collect_inputs(std::unique_ptr<FileSystem>& fs, const CollectRequest& request) {
  CollectedInputs out;
  std::vector<WheelInput> wheels;
  std::vector<std::string> logicals;
  for (const std::string& input : request.inputs)
    logicals.push_back(request.rooted ? normalize_path(input) : absolute_path(input));
  read_heads_ahead(*fs, logicals);
  for (size_t i = 0; i < request.inputs.size(); ++i) {
    const std::string &input = request.inputs[i], &logical = logicals[i];
    if (request.rooted && !fs->stat(logical) && is_host_archive(input)) {
      collect_host_archive(fs, input, request, wheels, out);
      continue;
    }
    collect_one(fs, input, logical, request, wheels, out);
  }
  if (request.python_env) {
    std::string prefix = request.rooted ? normalize_path(*request.python_env) : absolute_path(*request.python_env);
    auto dirs = interpreter_site_packages(*fs, prefix);
    if (dirs.empty()) {
      out.unreadable_inputs.push_back(*request.python_env);
      out.findings.push_back(input_error(*request.python_env, why_not_python_environment(*fs, prefix)));
    }
    size_t audited = 0, skipped_before = out.skipped_files;
    for (const std::string& dir : dirs) {
      add_environment(*fs, dir, out, importing_venv(dirs, dir));
      audited += audit_directory(*fs, dir, dir, request, out, binaries_of_environment(dir), true);
    }
    if (!dirs.empty() && audited == 0) {
      out.unreadable_inputs.push_back(*request.python_env);
      out.findings.push_back(input_error(
          *request.python_env, fmt::format("no ELF file in its site-packages ({}; {} other files)", fmt::join(dirs, ", "),
                                           out.skipped_files - skipped_before)));
    }
  }
  const FileSystem* sniffed_with = fs.get();
  if (!wheels.empty()) install_wheels(fs, wheels, out);
  if (request.inputs.empty() && !request.python_env && request.rooted) audit_directory(*fs, "/", "/", request, out);
  if (fs.get() != sniffed_with) out.open_roots.clear();  // the roots' paths name files of the new one
  warn_unused_image_choice(request, out);
  return out;
}

std::vector<Finding> attribute_owners(Graph& graph, const CollectedInputs& inputs, const FileOwners& owners) {
  std::set<std::string> from_system;
  for (Object& object : graph.objects) {
    if (const Distribution* owner = owners.of(object)) object.owner = owner->name;
    else if (inputs.install && object.owner.empty()) {
      object.owner = "system";
      from_system.insert(basename_of(object.path));
    }
  }
  if (from_system.empty()) return {};
  return {info("system-libraries", "",
               fmt::format("{} libraries come from the system, not from the installed distributions: {}",
                           from_system.size(), fmt::join(from_system, ", ")))};
}

namespace {

std::string shown(std::string text, const CollectedInputs& inputs) {
  for (const auto& [prefix, label] : inputs.shown_as) {
    for (size_t at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at + label.size())) {
      size_t end = at + prefix.size();
      if (end < text.size() && text[end] != '/') continue;
      text.replace(at, prefix.size(), label);
    }
  }
  return text;
}

}  // namespace

void show_installed_paths(ScanResult& result, const CollectedInputs& inputs) {
  if (inputs.shown_as.empty()) return;
  for (Object& o : result.graph.objects) {
    o.path = shown(o.path, inputs);
    o.realpath = shown(o.realpath, inputs);
  }
  for (Edge& e : result.graph.edges) {
    if (e.name.find('/') != std::string::npos) e.name = shown(e.name, inputs);  // loaded by its path (loaded_first)
    e.how_detail = shown(e.how_detail, inputs);
    // Lists that name no temporary path stay shared.
    bool names_temporary = std::any_of(e.tried.begin(), e.tried.end(),
                                       [&](const Attempt& a) { return shown(a.path, inputs) != a.path; });
    if (names_temporary)
      for (Attempt& a : e.tried.edit()) a.path = shown(a.path, inputs);
  }
  for (Finding& f : result.findings) {
    f.message = shown(f.message, inputs);
    f.path = shown(f.path, inputs);
    f.fix = shown(f.fix, inputs);
  }
}

}  // namespace depscan
