#include "analyzer/check/cuda_stack.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include <fmt/format.h>

#include "analyzer/check/shipped_libraries.h"

namespace depscan {
namespace {

std::string file_name(const Object& o) { return basename_of(o.realpath.empty() ? o.path : o.realpath); }

// Components whose SONAME major is the CUDA major (libcudart.so.12 -> CUDA 12).
bool soname_major_is_cuda_major(std::string_view component) {
  static const std::set<std::string_view> kinds = {"cudart", "cublas", "cublasLt", "nvrtc", "nvjitlink", "cupti"};
  return kinds.contains(component);
}

// "#define NAME 123" in a header's text.
std::optional<int> header_define(std::string_view text, std::string_view name) {
  std::string pattern = fmt::format("#define {} ", name);
  size_t at = text.find(pattern);
  if (at == std::string_view::npos) return std::nullopt;
  size_t i = at + pattern.size();
  while (i < text.size() && text[i] == ' ') ++i;
  int value = 0;
  bool any = false;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9' && value < 100000000) {
    value = value * 10 + (text[i++] - '0');
    any = true;
  }
  return any ? std::optional<int>(value) : std::nullopt;
}

// A directory of the system's own libraries (/usr/lib/x86_64-linux-gnu, /usr/local/cuda-13.0/lib64).
bool in_system_library_dir(std::string_view dir) {
  for (std::string_view system : {"/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib", "/usr/local/cuda"})
    if (dir == system || (dir.starts_with(system) && dir[system.size()] == '/')) return true;
  return dir.starts_with("/usr/local/cuda-");
}

// Headers beside a library directory; the system's include directories only for a library in the
// system's own directories, whose headers they are: they say nothing of a wheel's or an
// application's copy (site-packages/nvidia/cudnn/lib is not /usr/include's cuDNN).
std::vector<std::string> include_dirs_for(const std::string& library_dir) {
  std::vector<std::string> dirs = {normalize_path(library_dir + "/../include"),
                                   normalize_path(library_dir + "/../../include")};
  if (in_system_library_dir(library_dir))
    for (const char* dir : {"/usr/include", "/usr/include/x86_64-linux-gnu", "/usr/local/cuda/include"}) dirs.emplace_back(dir);
  return dirs;
}

// A define in the first 64 KiB of a header, read 16 KiB first: cuda_runtime_api.h is 600 KB and
// CUDART_VERSION follows its licence comment (byte 6,142 in CUDA 13.0). nullopt: no such file.
std::optional<std::optional<int>> define_near_start(const FileSystem& fs, const std::string& path, std::string_view name) {
  constexpr size_t kFirst = 16 << 10, kLast = 64 << 10;
  auto text = fs.read_text(path, kFirst);
  if (!text) return std::nullopt;
  if (text->size() < kFirst) return header_define(*text, name);
  std::string_view whole_lines(*text);
  whole_lines = whole_lines.substr(0, whole_lines.rfind('\n') + 1);  // a define cut off at 16 KiB is read again
  if (auto value = header_define(whole_lines, name)) return value;
  text = fs.read_text(path, kLast);
  if (!text) return std::nullopt;
  return header_define(*text, name);
}

// CUDART_VERSION (13000 -> 13.0) from cuda_runtime_api.h beside the library.
std::optional<SourcedVersion> cudart_header_version(const FileSystem& fs, const std::string& library_dir, int major) {
  for (const std::string& dir : include_dirs_for(library_dir)) {
    std::string path = join_path(dir, "cuda_runtime_api.h");
    auto found = define_near_start(fs, path, "CUDART_VERSION");
    if (!found) continue;
    const std::optional<int>& value = *found;
    if (!value || *value / 1000 != major) continue;
    return SourcedVersion{Version{{*value / 1000, *value % 1000 / 10}}, "CUDART_VERSION in " + path};
  }
  return std::nullopt;
}

// The CUDA majors a cuDNN library was built for: from the CUDA libraries it opens or needs,
// the distribution that installed it (nvidia-cudnn-cu12), or its RUNPATH (.../cu13/lib).
std::pair<std::vector<int>, std::string> cudnn_cuda_majors(const Graph& g, size_t index, const Matrix& matrix) {
  std::set<int> majors;
  std::string evidence;
  for (const Edge& e : g.edges) {
    if (e.from != index) continue;
    const ComponentRow* comp = matrix.component_of(e.name);
    if (!comp || (comp->component != "cublasLt" && comp->component != "cublas" && comp->component != "nvrtc" &&
                  comp->component != "cudart"))
      continue;
    std::vector<int> m = matrix.cuda_majors_of(e.name);
    if (m.size() != 1) continue;
    majors.insert(m.front());
    if (evidence.empty()) evidence = fmt::format("it opens {}", e.name);
  }
  if (!majors.empty()) return {{majors.begin(), majors.end()}, evidence};
  const Object& o = g.objects[index];
  if (auto major = cuda_major_of_distribution(o.owner)) return {{*major}, fmt::format("installed by {}", o.owner)};
  if (o.binary && o.binary->runpath)
    if (auto major = cu_major_in(*o.binary->runpath, "/", "/lib"))
      return {{major->first}, fmt::format("its RUNPATH names {}", major->second)};
  return {{}, ""};
}

// The version of the NVIDIA wheel (`project` is its name up to the CUDA suffix: nvidia-cudnn-cu12,
// nvidia-cuda-runtime) that installed a library whose files name no release, where no header lies
// beside them (a wheel given as input installs no headers).
std::optional<std::pair<Version, std::string>> wheel_version(const CheckContext& ctx, const Object& o,
                                                             const std::string& file, std::string_view project) {
  const ShippedLibraries::Shipped* shipped = shipped_library(ctx, file);
  if (!shipped || shipped->distribution->name != o.owner || !normalize_dist_name(o.owner).starts_with(project))
    return std::nullopt;
  auto version = Version::parse_release(shipped->distribution->version);
  if (!version) return std::nullopt;
  return std::make_pair(*version, fmt::format("the version of {}, which installed it", o.owner));
}

std::optional<CudaLibrary> identify(const CheckContext& ctx, size_t index, HeaderVersions& headers) {
  const Object& o = ctx.graph.objects[index];
  if (!o.binary) return std::nullopt;
  std::string name = soname_or_file_name(o);
  std::string file = file_name(o);
  std::string dir = dirname_of(o.realpath.empty() ? o.path : o.realpath);
  CudaLibrary lib;
  lib.object = index;
  lib.name = name;
  if (const CudnnSeries* series = ctx.matrix.cudnn_series_of(name)) {
    lib.component = "cudnn";
    lib.cudnn_major = series->major;
    lib.cudnn_shim = name == series->shim;
    if (auto v = version_from_file_name(file, 3); v && v->major() == series->major) {
      lib.version = v;
      lib.version_source = "file name " + file;
    } else if (auto h = headers.cudnn(dir, series->major)) {
      lib.version = h->version;
      lib.version_source = h->source;
    } else if (auto wheel = wheel_version(ctx, o, file, "nvidia-cudnn-cu")) {
      std::tie(lib.version, lib.version_source) = *wheel;
    }
    return lib;
  }
  const ComponentRow* comp = ctx.matrix.component_of(name);
  if (!comp) return std::nullopt;
  lib.component = comp->component;
  lib.cuda_majors = ctx.matrix.cuda_majors_of(name);
  lib.cuda_source = "SONAME " + name;
  auto soname_version = version_from_file_name(name);
  if (lib.cuda_majors.empty() && soname_version && soname_version->major() >= 11 &&
      soname_major_is_cuda_major(lib.component))
    lib.cuda_majors = {soname_version->major()};
  if (lib.component == "driver") {
    lib.stub = is_stub_driver(o);
    lib.cuda_majors.clear();
    if (auto v = version_from_file_name(file, 2); v && v->major() >= 100 && !lib.stub) {
      lib.version = v;
      lib.version_source = "file name " + file;
    }
    return lib;
  }
  size_t soname_parts = soname_version ? soname_version->parts.size() : 0;
  if (auto v = version_from_file_name(file, soname_parts + 1); v && file.starts_with(comp->prefix + ".")) {
    lib.version = v;
    lib.version_source = "file name " + file;
  } else if (lib.component == "cudart" && soname_version) {
    if (auto h = headers.cudart(dir, soname_version->major())) {
      lib.version = h->version;
      lib.version_source = h->source;
    } else if (auto wheel = wheel_version(ctx, o, file, "nvidia-cuda-runtime");
               wheel && wheel->first.major() == soname_version->major()) {
      std::tie(lib.version, lib.version_source) = *wheel;  // cudart's version is its CUDA release's
    }
  } else if (lib.component == "nvrtc-builtins") {
    if (auto builtins = version_from_file_name(name, 2)) {
      lib.version = builtins;
      lib.version_source = "SONAME " + name;
      lib.cuda_majors = {builtins->major()};
    }
  }
  return lib;
}

// Libraries of one cuDNN install share the CUDA major they were built for.
void share_cudnn_cuda_majors(const Graph& g, std::vector<CudaLibrary>& libraries) {
  std::vector<const CudaLibrary*> direct;  // libraries whose own edges or metadata told the major
  for (const CudaLibrary& lib : libraries)
    if (lib.component == "cudnn" && !lib.cuda_majors.empty()) direct.push_back(&lib);
  std::vector<std::pair<CudaLibrary*, const CudaLibrary*>> shared;
  for (CudaLibrary& lib : libraries) {
    if (lib.component != "cudnn" || !lib.cuda_majors.empty()) continue;
    std::string dir = dirname_of(g.objects[lib.object].realpath);
    for (const CudaLibrary* other : direct)
      if (other->cudnn_major == lib.cudnn_major && dirname_of(g.objects[other->object].realpath) == dir) {
        shared.emplace_back(&lib, other);
        break;
      }
  }
  for (auto [lib, other] : shared) {
    lib->cuda_majors = other->cuda_majors;
    lib->cuda_source = fmt::format("same cuDNN install as {}, where {}", other->name, other->cuda_source);
  }
}

// `describe` is called only for a CUDA library's name: most names a program needs are not.
template <class Describe>
void add_requirement(CudaStack& stack, const Matrix& matrix, size_t object, std::string_view name,
                     const Describe& describe) {
  CudaRequirement r;
  r.object = object;
  if (const CudnnSeries* s = matrix.cudnn_series_of(name)) {
    r.component = "cudnn";
    r.cudnn_major = s->major;
  } else if (const ComponentRow* c = matrix.component_of(name)) {
    r.component = c->component;
    std::vector<int> majors = matrix.cuda_majors_of(name);
    if (majors.size() == 1) r.cuda_major = majors.front();
  } else {
    return;
  }
  r.what = describe();
  stack.requirements.push_back(std::move(r));
}

// NEEDED entries, version needs and imported symbols of the objects that are not CUDA libraries.
void collect_requirements(const CheckContext& ctx, CudaStack& stack) {
  const Graph& g = ctx.graph;
  for (size_t i = 0; i < g.objects.size(); ++i) {
    const Object& o = g.objects[i];
    if (!o.binary || stack.for_object(i)) continue;
    for (const std::string& needed : o.binary->needed)
      add_requirement(stack, ctx.matrix, i, needed, [&] { return "NEEDED " + needed; });
    // Version needs come grouped by file (one DT_VERNEED entry each): the matrix is asked once per
    // group whether the file is a CUDA library at all (most are libc and its family).
    std::set<std::pair<std::string_view, std::string_view>> versions;
    std::string_view last_file;
    bool last_is_cuda = false;
    for (const VersionNeed& need : o.binary->version_needs) {
      if (need.file != last_file || last_file.empty()) {
        last_file = need.file;
        last_is_cuda = ctx.matrix.cudnn_series_of(need.file) || ctx.matrix.component_of(need.file);
      }
      if (last_is_cuda && versions.emplace(need.file, need.version).second)
        add_requirement(stack, ctx.matrix, i, need.file,
                        [&] { return fmt::format("version {} of {}", need.version, need.file); });
    }
    size_t imported = 0;
    for (const Symbol& s : o.binary->symbols) {
      if (s.defined || !(s.name.starts_with("cuda") || s.name.starts_with("cudnn") || s.name.starts_with("cu"))) continue;
      if (s.version_file.empty() || ++imported > 3) continue;
      add_requirement(stack, ctx.matrix, i, s.version_file, [&] { return fmt::format("symbol {}@{}", s.name, s.version); });
    }
  }
  for (const Edge& e : g.edges)
    if (e.kind == EdgeKind::Dlopen && !stack.for_object(e.from))
      add_requirement(stack, ctx.matrix, e.from, e.name, [&] {
        return fmt::format("dlopen {}{}", e.name, e.inferred ? " (name found in its read-only data)" : "");
      });
}

}  // namespace

std::vector<const CudaLibrary*> CudaStack::of(std::string_view component) const {
  std::vector<const CudaLibrary*> out;
  for (const CudaLibrary& lib : libraries)
    if (lib.component == component) out.push_back(&lib);
  return out;
}

const CudaLibrary* CudaStack::for_object(size_t object) const {
  for (const CudaLibrary& lib : libraries)
    if (lib.object == object) return &lib;
  return nullptr;
}

std::optional<Version> version_from_file_name(std::string_view file_name, size_t min_parts) {
  size_t at = file_name.find(".so.");
  if (at == std::string_view::npos) return std::nullopt;
  auto v = Version::parse(file_name.substr(at + 4));
  if (!v || v->parts.size() < min_parts) return std::nullopt;
  return v;
}

std::optional<Version> parse_nvidia_version_text(std::string_view text) {
  // The first whitespace-separated word of the first line that is N.N or N.N.N.
  std::string_view line = text.substr(0, text.find('\n'));
  auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  for (size_t start = 0; start < line.size();) {
    while (start < line.size() && is_space(line[start])) ++start;
    size_t end = start;
    while (end < line.size() && !is_space(line[end])) ++end;
    auto v = Version::parse(line.substr(start, end - start));
    if (v && (v->parts.size() == 2 || v->parts.size() == 3)) return v;
    start = end;
  }
  return std::nullopt;
}

std::optional<std::pair<int, std::string_view>> cu_major_in(std::string_view text, std::string_view before,
                                                            std::string_view after) {
  for (size_t at = text.find("cu1"); at != std::string_view::npos; at = text.find("cu1", at + 1)) {
    size_t digit = at + 3, end = digit + 1 + after.size();
    if (at < before.size() || digit >= text.size() || !std::isdigit(static_cast<unsigned char>(text[digit])) ||
        text.substr(at - before.size(), before.size()) != before || text.substr(digit + 1, after.size()) != after)
      continue;
    return std::make_pair(10 + (text[digit] - '0'), text.substr(at - before.size(), end - (at - before.size())));
  }
  return std::nullopt;
}

std::optional<int> cuda_major_of_distribution(std::string_view name) {
  std::string normalised = normalize_dist_name(name);
  for (std::string_view rest = normalised; !rest.empty();) {
    size_t end = rest.find('-');
    std::string_view part = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    if (part.starts_with("cuda")) {
      part.remove_prefix(4);
      if (part.ends_with('x')) part.remove_suffix(1);
    } else if (part.starts_with("cu")) {
      part.remove_prefix(2);
    } else {
      continue;
    }
    // cu12, and cu120 or cu124 (major and minor: spconv-cu120, mxnet-cu112)
    bool digits = std::ranges::all_of(part, [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    if (digits && (part.size() == 2 || part.size() == 3) && part[0] == '1') return 10 + (part[1] - '0');
  }
  return std::nullopt;
}

std::optional<SourcedVersion> driver_version_from_system(const FileSystem& fs) {
  for (const char* path : {"/proc/driver/nvidia/version", "/sys/module/nvidia/version"}) {
    auto text = fs.read_text(path, 4096);
    if (!text) continue;
    if (auto v = parse_nvidia_version_text(*text); v && v->major() >= 100) return SourcedVersion{*v, path};
  }
  return std::nullopt;
}

std::optional<SourcedVersion> cudnn_header_version(const FileSystem& fs, const std::string& library_dir, int major) {
  std::vector<std::string> names = {fmt::format("cudnn_version_v{}.h", major), "cudnn_version.h", "cudnn.h"};
  for (const std::string& dir : include_dirs_for(library_dir))
    for (const std::string& name : names) {
      std::string path = join_path(dir, name);
      auto text = fs.read_text(path, 1 << 20);
      if (!text) continue;
      auto ma = header_define(*text, "CUDNN_MAJOR");
      auto mi = header_define(*text, "CUDNN_MINOR");
      auto pa = header_define(*text, "CUDNN_PATCHLEVEL");
      if (ma && mi && pa && *ma == major) return SourcedVersion{Version{{*ma, *mi, *pa}}, "CUDNN_MAJOR/MINOR/PATCHLEVEL in " + path};
    }
  return std::nullopt;
}

std::optional<SourcedVersion> HeaderVersions::cudnn(const std::string& library_dir, int major) {
  auto [it, inserted] = memo_.try_emplace({true, library_dir, major});
  if (inserted) it->second = cudnn_header_version(fs_, library_dir, major);
  return it->second;
}

std::optional<SourcedVersion> HeaderVersions::cudart(const std::string& library_dir, int major) {
  auto [it, inserted] = memo_.try_emplace({false, library_dir, major});
  if (inserted) it->second = cudart_header_version(fs_, library_dir, major);
  return it->second;
}

bool is_stub_driver(const Object& object) {
  const std::string& path = object.realpath.empty() ? object.path : object.realpath;
  if (path.find("/stubs/") != std::string::npos) return true;
  const Binary* b = object.binary.get();
  if (!b || b->soname != std::optional<std::string>("libcuda.so.1") || !b->needed.empty()) return false;
  auto text = std::find_if(b->sections.begin(), b->sections.end(), [](const Section& s) { return s.name == ".text"; });
  return text != b->sections.end() && text->size < (64u << 10);
}

CudaStack identify_cuda_stack(const CheckContext& ctx) {
  CudaStack stack;
  const Graph& g = ctx.graph;
  HeaderVersions headers(ctx.fs);
  for (size_t i = 0; i < g.objects.size(); ++i)
    if (auto lib = identify(ctx, i, headers)) stack.libraries.push_back(std::move(*lib));
  for (CudaLibrary& lib : stack.libraries)
    if (lib.component == "cudnn") std::tie(lib.cuda_majors, lib.cuda_source) = cudnn_cuda_majors(g, lib.object, ctx.matrix);
  share_cudnn_cuda_majors(g, stack.libraries);
  collect_requirements(ctx, stack);
  for (const Edge& e : g.edges)
    if (e.name == "libcuda.so.1") stack.driver_searched = true;
  if (ctx.target.driver) {
    if (auto v = Version::parse(*ctx.target.driver)) stack.driver = SourcedVersion{*v, "--driver"};
  }
  if (!stack.driver)
    for (const CudaLibrary* d : stack.of("driver"))
      if (d->version) {
        stack.driver = SourcedVersion{*d->version, d->version_source};
        break;
      }
  if (!ctx.target.driver) stack.kernel_driver = driver_version_from_system(ctx.fs);
  // A libcuda older than the kernel module never runs (driver-library-mismatch); once it is off the
  // path, the kernel's own driver is the one the other checks are about.
  if (!stack.driver || (stack.kernel_driver && stack.driver->version < stack.kernel_driver->version))
    stack.driver = stack.kernel_driver;
  return stack;
}

}  // namespace depscan
