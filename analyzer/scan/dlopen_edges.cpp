#include "analyzer/scan/dlopen_edges.h"

#include <algorithm>
#include <map>
#include <set>
#include <span>
#include <unordered_map>

#include <fmt/format.h>

#include "analyzer/check/cuda_stack.h"
#include "analyzer/read/rodata_strings.h"
#include "analyzer/util/parallel.h"
#include "analyzer/util/strings.h"

namespace depscan {
namespace {

bool is_system_path(std::string_view path) {
  for (std::string_view dir : {"/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/", "/lib32/", "/usr/lib32/"})
    if (path.starts_with(dir)) return true;
  return false;
}

// "libcudnn_ops.so" -> "libcudnn_ops.so." (what a versioned sibling starts with).
bool has_versioned_sibling(const std::vector<std::string>& names, const std::string& name) {
  for (const std::string& other : names)
    if (is_dotted_extension_of(other, name)) return true;
  return false;
}

class DlopenEdges {
 public:
  DlopenEdges(Resolver& resolver, const Matrix& matrix, const FileSystem& fs, const FileOwners* owners)
      : resolver_(resolver), matrix_(matrix), fs_(fs), owners_(owners), headers_(fs) {}

  void run() {
    scan_loaded_objects();
    for (size_t root = 0; root < resolver_.graph().roots.size(); ++root) {
      walk(root, /*with_cuda_major=*/false);
      walk(root, /*with_cuda_major=*/true);
    }
  }

 private:
  // Every object in the root's load order, including the ones dlopen edges add on the way. The
  // second walk adds what needs the CUDA major of the cuDNN install, known once it is loaded.
  void walk(size_t root, bool with_cuda_major) {
    for (size_t k = 0; k < resolver_.graph().load_order[root].size(); ++k) {
      size_t object = resolver_.graph().load_order[root][k];
      if (!resolver_.graph().objects[object].binary) continue;
      add_known(root, object, /*with_cuda_major=*/false);
      if (!with_cuda_major) continue;
      add_known(root, object, /*with_cuda_major=*/true);
      add_inferred(root, object);  // after the known edges, so a name both give stays "known"
    }
  }

  // The matrix rows for what an object opens, matched (by glob) once per object, not once per root.
  const std::vector<const DlopenRow*>& rows_for(size_t object) {
    auto [it, inserted] = rows_.try_emplace(object);
    if (inserted) it->second = matrix_.dlopen_rows_for(soname_or_file_name(resolver_.graph().objects[object]));
    return it->second;
  }

  bool is_cuda_name(std::string_view name) const {
    return matrix_.component_of(name) != nullptr || matrix_.cudnn_series_of(name) != nullptr ||
           matrix_.windows_component_of(name) != nullptr || matrix_.windows_cudnn_series_of(name) != nullptr;
  }

  bool worth_scanning(const Object& o) const {
    return !is_system_path(o.realpath.empty() ? o.path : o.realpath) || is_cuda_name(soname_or_file_name(o));
  }

  // Whether the names in an object's read-only data are worth turning into edges: not when the
  // matrix documents what the library opens (NVIDIA's own Linux libraries: cuBLASLt alone has 46 MB of
  // .rodata; rows that read the file itself, as TensorFlow's and JAX's do, document nothing of a
  // file they do not apply to), and not when it cannot call dlopen itself (a dynamic object that imports neither
  // dlopen nor dlmopen; a static program may carry its own dlopen and is always scanned).
  // Asked for every object of every root's load order: decided once per object.
  bool may_infer(size_t object) {
    auto [it, inserted] = may_infer_.try_emplace(object, false);
    if (inserted) it->second = decide_may_infer(object);
    return it->second;
  }

  bool decide_may_infer(size_t object) {
    const Object& o = resolver_.graph().objects[object];
    if (!o.binary || !worth_scanning(o)) return false;
    const auto& rows = rows_for(object);
    bool documented = !rows.empty() && std::all_of(rows.begin(), rows.end(), [&](const DlopenRow* r) {
      return r->probe != "library_name_strings" && r->probe != "tsl_cuda_stubs" && !r->also_strings &&
             expandable(*r, object);
    });
    return !documented && (!o.binary->symbols_read || imports_dlopen(*o.binary) || o.binary->symbols.empty());
  }

  // A row naming the opener's own {major}.{minor} (libnvrtc-builtins.so.13.0) needs them.
  bool expandable(const DlopenRow& row, size_t object) {
    bool needs_own_version = std::any_of(row.opens.begin(), row.opens.end(), [](const std::string& n) {
      return n.find("{major}") != std::string::npos || n.find("{minor}") != std::string::npos;
    });
    return !needs_own_version || row_version(object, row).has_value();
  }

  // The opener's {major}.{minor} for a row that names them: from its file name
  // (libnvrtc.so.13.0.88), or else the major from the file name and the minor from the name the
  // row opens as .rodata keeps it (CUDA 13 ships libnvrtc.so.13; it keeps "libnvrtc-builtins.so.13.0").
  std::optional<Version> row_version(size_t object, const DlopenRow& row) {
    if (auto v = own_version(object)) return v;
    const Object& o = resolver_.graph().objects[object];
    auto major = version_from_file_name(basename_of(o.realpath.empty() ? o.path : o.realpath), 1);
    if (!major || !o.binary) return std::nullopt;
    for (const std::string& pattern : row.opens) {
      size_t at = pattern.find("{major}.{minor}");
      if (at == std::string::npos) continue;
      std::string prefix = pattern.substr(0, at) + std::to_string(major->major()) + ".";
      auto [it, inserted] = prefixed_.try_emplace({o.binary.get(), prefix});
      if (inserted)
        if (auto found = rodata_string_with_prefix(fs_, *o.binary, prefix)) it->second = std::move(*found);
      if (!it->second) continue;
      std::string_view rest = std::string_view(*it->second).substr(prefix.size());
      size_t digits = 0;
      while (digits < rest.size() && digits < 4 && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
      if (digits == 0) continue;
      return Version{{major->major(), std::stoi(std::string(rest.substr(0, digits)))}};
    }
    return std::nullopt;
  }

  // Whether the object's .rodata names `name` without its version ("libcudnn_ext.so" for
  // libcudnn_ext.so.9): cuDNN's later releases open sub-libraries its earlier ones do not know.
  bool names_in_rodata(size_t object, const std::string& name) {
    const Object& o = resolver_.graph().objects[object];
    size_t so = name.find(".so");
    if (!o.binary || so == std::string::npos) return false;
    std::string base = name.substr(0, so + 3);
    auto [it, inserted] = prefixed_.try_emplace({o.binary.get(), base});
    if (inserted)
      if (auto found = rodata_string_with_prefix(fs_, *o.binary, base)) it->second = std::move(*found);
    return it->second.has_value();
  }

  // dlopen or dlmopen; in a PE file, the LoadLibrary functions.
  static bool imports_dlopen(const Binary& binary) {
    static constexpr std::string_view kElf[] = {"dlopen", "dlmopen"};
    static constexpr std::string_view kPe[] = {"LoadLibraryA", "LoadLibraryW", "LoadLibraryExA", "LoadLibraryExW"};
    std::span<const std::string_view> openers = binary.format == Format::Pe ? std::span<const std::string_view>(kPe) : kElf;
    return std::any_of(binary.symbols.begin(), binary.symbols.end(), [&](const Symbol& s) {
      return !s.defined && std::find(openers.begin(), openers.end(), s.name) != openers.end();
    });
  }

  static std::vector<std::string> scan(const FileSystem& fs, const Binary& binary) {
    if (auto found = rodata_library_names(fs, binary)) return std::move(*found);
    return {};
  }

  // The read-only data of every object loaded so far that add_inferred will read, scanned in
  // parallel, each file once (objects reached by several paths share one Binary). Objects that
  // dlopen edges add later, and cuDNN libraries asked for their CUDA major, are scanned when needed.
  void scan_loaded_objects() {
    std::vector<const Binary*> binaries;
    for (size_t object = 0; object < resolver_.graph().objects.size(); ++object)
      if (may_infer(object)) {
        const Binary* b = resolver_.graph().objects[object].binary.get();
        if (std::find(binaries.begin(), binaries.end(), b) == binaries.end()) binaries.push_back(b);
      }
    std::vector<std::vector<std::string>> found(binaries.size());
    parallel_for_index(binaries.size(), [&](size_t i) { found[i] = scan(fs_, *binaries[i]); });
    for (size_t i = 0; i < binaries.size(); ++i) strings_.emplace(binaries[i], std::move(found[i]));
  }

  const std::vector<std::string>& strings_of(size_t object) {
    static const std::vector<std::string> none;
    const Object& o = resolver_.graph().objects[object];
    if (!o.binary || !worth_scanning(o)) return none;
    auto it = strings_.find(o.binary.get());
    if (it != strings_.end()) return it->second;
    return strings_.emplace(o.binary.get(), scan(fs_, *o.binary)).first->second;
  }

  // Whether the root already has an edge from `object` for `name` (its NEEDED, or a dlopen edge
  // added before), case ignored for a PE file's. Edges are indexed as the graph grows, each once.
  bool already_has(size_t root, size_t object, const std::string& name) {
    const std::vector<Edge>& edges = resolver_.graph().edges;
    for (; indexed_edges_ < edges.size(); ++indexed_edges_) {
      const Edge& e = edges[indexed_edges_];
      existing_.insert({e.root, e.from, edge_key(e.from, e.name)});
    }
    return !existing_.insert({root, object, edge_key(object, name)}).second;
  }

  std::string edge_key(size_t object, const std::string& name) const {
    const Object& o = resolver_.graph().objects[object];
    return o.binary && o.binary->format == Format::Pe ? ascii_lower(name) : name;
  }

  void add(size_t root, size_t object, const std::string& name, bool inferred, const std::string& source) {
    if (already_has(root, object, name)) return;
    resolver_.add_dlopen(root, object, name, inferred, source);
  }

  // The opener's own version from its file name: libnvrtc.so.13.0.88 -> 13.0.88.
  std::optional<Version> own_version(size_t object) const {
    const Object& o = resolver_.graph().objects[object];
    return version_from_file_name(basename_of(o.realpath.empty() ? o.path : o.realpath), 2);
  }

  // The CUDA major a cuDNN library was built for, from the CUDA library names it (or another
  // cuDNN library of the same directory) keeps in its read-only data.
  std::optional<int> cuda_major_of(size_t object) {
    if (auto own = cuda_major_named_by(object)) return own;
    std::string dir = dirname_of(resolver_.graph().objects[object].realpath);
    auto [it, inserted] = cuda_major_of_dir_.try_emplace(dir);
    if (inserted) it->second = cuda_major_of_siblings(dir);
    return it->second;
  }

  std::optional<int> cuda_major_named_by(size_t object) {
    for (const std::string& name : strings_of(object)) {
      const ComponentRow* c = matrix_.component_of(name);
      if (!c || (c->component != "cublasLt" && c->component != "nvrtc")) continue;
      std::vector<int> majors = matrix_.cuda_majors_of(name);
      if (majors.size() == 1) return majors.front();
    }
    return std::nullopt;
  }

  // The cuDNN libraries of `dir`, the smallest read-only data first (one of them names cuBLASLt).
  std::optional<int> cuda_major_of_siblings(const std::string& dir) {
    std::vector<std::pair<uint64_t, size_t>> siblings;
    for (size_t i = 0; i < resolver_.graph().objects.size(); ++i) {
      const Object& o = resolver_.graph().objects[i];
      if (o.binary && dirname_of(o.realpath) == dir && matrix_.cudnn_series_of(soname_or_file_name(o)))
        siblings.emplace_back(rodata_size(*o.binary), i);
    }
    std::sort(siblings.begin(), siblings.end());
    for (const auto& [size, i] : siblings)
      if (auto major = cuda_major_named_by(i)) return major;
    return std::nullopt;
  }

  // {major} {minor} {cuda_major}; nullopt when a value is unknown.
  std::optional<std::string> expand(std::string name, const DlopenRow& row, size_t object, bool with_cuda_major) {
    auto replace = [&](std::string_view key, const std::string& value) {
      for (size_t at = name.find(key); at != std::string::npos; at = name.find(key)) name.replace(at, key.size(), value);
    };
    if (name.find("{major}") != std::string::npos || name.find("{minor}") != std::string::npos) {
      auto v = row_version(object, row);
      if (!v) return std::nullopt;
      replace("{major}", std::to_string(v->major()));
      replace("{minor}", std::to_string(v->minor()));
    }
    bool wants_cuda = name.find("{cuda_major}") != std::string::npos;
    if (wants_cuda != with_cuda_major) return std::nullopt;
    if (wants_cuda) {
      auto major = cuda_major_of(object);
      if (!major) return std::nullopt;
      replace("{cuda_major}", std::to_string(*major));
    }
    return name;
  }

  bool resolves(size_t root, size_t object, const std::string& name) const {
    std::vector<Attempt> steps = resolver_.explain(root, object, name);
    return !steps.empty() && steps.back().outcome.starts_with("found");
  }

  // The cuDNN shim's probe: name.M.m.p, name.M.m, then name (E14's "Unable to load any of").
  void add_probed(size_t root, size_t object, const std::string& name, const DlopenRow& row) {
    const Object& o = resolver_.graph().objects[object];
    std::vector<std::string> candidates;
    std::optional<Version> v = own_version(object);
    if (!v || v->parts.size() < 3) {
      if (const CudnnSeries* s = matrix_.cudnn_series_of(soname_or_file_name(o)))
        if (auto h = headers_.cudnn(dirname_of(o.realpath), s->major)) v = h->version;
    }
    if (v && v->parts.size() >= 3) {
      candidates.push_back(fmt::format("{}.{}.{}", name, v->minor(), v->patch()));
      candidates.push_back(fmt::format("{}.{}", name, v->minor()));
    }
    candidates.push_back(name);
    std::string chosen = name;
    for (const std::string& c : candidates)
      if (resolves(root, object, c)) {
        chosen = c;
        break;
      }
    std::string tried;
    for (const std::string& c : candidates) tried += (tried.empty() ? "" : ", ") + c;
    add(root, object, chosen, false, fmt::format("matrix: {} tries {{{}}} ({})", soname_or_file_name(o), tried, row.source));
  }

  bool needs_a_match(size_t object, const std::string& glob) const {
    const Object& o = resolver_.graph().objects[object];
    return !glob.empty() && o.binary &&
           std::ranges::any_of(o.binary->needed, [&](const std::string& n) { return glob_match(glob, n); });
  }

  void add_known(size_t root, size_t object, bool with_cuda_major) {
    std::string opener = soname_or_file_name(resolver_.graph().objects[object]);
    for (const DlopenRow* row : rows_for(object)) {
      if (needs_a_match(object, row->unless_needed)) continue;
      if (row->probe == "tsl_cuda_stubs") {
        if (!with_cuda_major) add_stubbed(root, object, *row);
        continue;
      }
      if (row->probe == "library_name_strings") {
        if (with_cuda_major) continue;
        bool named = false;  // a CUDA library besides the driver
        for (const std::string& name : strings_of(object))
          if (is_cuda_name(name) && name.find('%') == std::string::npos) {
            add(root, object, name, true,
                fmt::format("string \"{}\" in .rodata; {} opens CUDA libraries by name ({})", name, opener, row->source));
            const ComponentRow* c = matrix_.component_of(name);
            named = named || !c || c->component != "driver";
          }
        if (!named) add_from_build(root, object, *row);
        continue;
      }
      for (const std::string& pattern : row->opens) {
        auto name = expand(pattern, *row, object, with_cuda_major);
        if (!name) continue;
        if (row->probe == "cudnn_version_suffixes") add_probed(root, object, *name, *row);
        else if (row->probe == "cudnn_named_sublibraries") {
          if (names_in_rodata(object, *name)) add_probed(root, object, *name, *row);
        } else add(root, object, *name, false,
                 fmt::format("matrix: {} opens {}{} ({})", opener, *name,
                             pattern.find("{minor}") != std::string::npos && !own_version(object)
                                 ? ", its major.minor as the name appears in its .rodata" : "",
                             row->source));
      }
    }
  }

  // TensorFlow 2.20 builds each name from a short literal ("cudart" and "12"): its read-only data
  // names none. The framework table's build for the owning distribution's version gives them.
  void add_from_build(size_t root, size_t object, const DlopenRow& row) {
    auto [it, inserted] = by_build_.try_emplace(object);
    if (inserted) it->second = names_from_build(object, row);
    for (const auto& [name, source] : it->second) add(root, object, name, false, source);
  }

  std::vector<std::pair<std::string, std::string>> names_from_build(size_t object, const DlopenRow& row) {
    const FrameworkRow* build = framework_build(object);
    if (!build || loads_another_of(object, row)) return {};
    int cuda = Version::parse(build->cuda)->major(), cudnn = Version::parse(build->cudnn)->major();
    std::string opener = soname_or_file_name(resolver_.graph().objects[object]);
    std::vector<std::pair<std::string, std::string>> out;
    for (const std::string& pattern : row.opens)
      if (auto name = soname_for_build(pattern, cuda, cudnn))
        out.emplace_back(*name, fmt::format("matrix: {} {} was built with CUDA {} and cuDNN {} ({}); {} opens {} by a "
                                            "name its read-only data does not hold ({})",
                                            build->framework, build->version, build->cuda, build->cudnn, build->source,
                                            opener, *name, row.source));
    return out;
  }

  // XLA's lazy-loading stubs (JAX's CUDA plugins): the row's names whose stub the object carries,
  // for the CUDA major its directory is named after (jax_plugins/xla_cuda13).
  void add_stubbed(size_t root, size_t object, const DlopenRow& row) {
    auto [it, inserted] = by_stubs_.try_emplace(std::make_pair(object, &row));
    if (inserted) it->second = names_from_stubs(object, row);
    for (const auto& [name, source] : it->second) add(root, object, name, false, source);
  }

  std::vector<std::pair<std::string, std::string>> names_from_stubs(size_t object, const DlopenRow& row) {
    const Object& o = resolver_.graph().objects[object];
    std::string dir = basename_of(dirname_of(o.path));
    std::optional<int> cuda = cuda_major_in_name(dir);
    if (!cuda || !o.binary) return {};
    const std::vector<std::string>& stubs = stubs_of(*o.binary);
    std::string opener = soname_or_file_name(o);
    std::vector<std::pair<std::string, std::string>> out;
    for (const std::string& pattern : row.opens) {
      std::string key = stub_key(pattern);
      bool carried = std::any_of(stubs.begin(), stubs.end(), [&](const std::string& s) { return equals_ignoring_case(s, key); });
      if (!carried) continue;
      if (auto name = soname_for_build(pattern, *cuda, 0))
        out.emplace_back(*name, fmt::format("matrix: {} carries XLA's stub tsl/cuda/{}_stub.cc, which opens {} on first "
                                            "use (CUDA {}, from its directory {}) ({})",
                                            opener, key, *name, *cuda, dir, row.source));
    }
    return out;
  }

  // The stubs a file carries, its .rodata read once however many rows and paths ask.
  const std::vector<std::string>& stubs_of(const Binary& binary) {
    auto [it, inserted] = stubs_.try_emplace(&binary);
    if (inserted)
      if (auto found = rodata_tsl_cuda_stubs(fs_, binary)) it->second = std::move(*found);
    return it->second;
  }

  // {soname:cudart} -> "cudart"; libcudnn.so.9 -> "cudnn".
  static std::string stub_key(const std::string& pattern) {
    const std::string_view prefix = "{soname:";
    if (pattern.starts_with(prefix)) return pattern.substr(prefix.size(), pattern.size() - prefix.size() - 1);
    std::string_view stem = pattern;
    if (stem.starts_with("lib")) stem.remove_prefix(3);
    return std::string(stem.substr(0, stem.find(".so")));
  }

  // "xla_cuda13" and "jax_cuda13_plugin" -> 13.
  static std::optional<int> cuda_major_in_name(std::string_view name) {
    size_t at = name.find("cuda");
    if (at == std::string_view::npos) return std::nullopt;
    std::string_view digits = name.substr(at + 4);
    size_t n = 0;
    while (n < digits.size() && n < 3 && digits[n] >= '0' && digits[n] <= '9') ++n;
    if (n == 0) return std::nullopt;
    return std::stoi(std::string(digits.substr(0, n)));
  }

  // The framework table's row for the distribution that installed the object (TensorFlow 2.20.0:
  // CUDA 12.5, cuDNN 9.3), by its version or else its major.minor; none for a CPU-only build.
  const FrameworkRow* framework_build(size_t object) const {
    const Distribution* owner = owners_ ? owners_->of(resolver_.graph().objects[object]) : nullptr;
    if (!owner || normalize_dist_name(owner->name).find("cpu") != std::string::npos) return nullptr;
    return matrix_.framework_build(owner->name, owner->version);
  }

  // {soname:C}: component C's SONAME for the CUDA major; {soname:cudnn}: the cuDNN major's shim.
  std::optional<std::string> soname_for_build(const std::string& pattern, int cuda_major, int cudnn_major) const {
    const std::string_view prefix = "{soname:";
    if (!pattern.starts_with(prefix)) return pattern;
    std::string component = pattern.substr(prefix.size(), pattern.size() - prefix.size() - 1);
    if (component == "cudnn") {
      for (const CudnnSeries& series : matrix_.cudnn_series())
        if (series.major == cudnn_major) return series.shim;
      return std::nullopt;
    }
    for (const ComponentRow& row : matrix_.components())
      if (row.component == component)
        for (const ComponentSoname& soname : row.sonames)
          if (std::find(soname.cuda_majors.begin(), soname.cuda_majors.end(), cuda_major) != soname.cuda_majors.end())
            return soname.name;
    return std::nullopt;
  }

  // Whether the object loads another library of the row (libtensorflow_cc.so.2 loads
  // libtensorflow_framework.so.2): the edges go on the lowest one, which holds the loader.
  bool loads_another_of(size_t object, const DlopenRow& row) const {
    const Graph& g = resolver_.graph();
    for (const Edge& e : g.edges) {
      if (e.from != object || !e.to || e.kind != EdgeKind::Needed) continue;
      std::string name = soname_or_file_name(g.objects[*e.to]);
      if (std::any_of(row.from.begin(), row.from.end(), [&](const std::string& p) { return glob_match(p, name); }))
        return true;
    }
    return false;
  }

  // Library names in read-only data (.rodata; a PE file's .rdata) the matrix knows as CUDA or cuDNN libraries.
  void add_inferred(size_t root, size_t object) {
    if (!may_infer(object)) return;
    const std::vector<std::string>& names = strings_of(object);
    const Object& o = resolver_.graph().objects[object];  // not held: add() grows the objects
    std::string self = soname_or_file_name(o), section(rodata_section_name(*o.binary));
    bool pe = o.binary->format == Format::Pe;
    // A bare name beside a versioned one is the fallback tried when that fails (libcudf's
    // "libnvrtc.so.{}" then "libnvrtc.so"); a versioned one the object NEEDs never fails to load.
    std::vector<std::string> needed = o.binary->needed;
    for (const std::string& name : names) {
      bool is_self = pe ? equals_ignoring_case(name, self) : name == self;
      if (is_self || name.find('%') != std::string::npos || !is_cuda_name(name)) continue;
      if (version_from_file_name(name) == std::nullopt &&
          (has_versioned_sibling(names, name) || has_versioned_sibling(needed, name)))
        continue;
      if (covered_by_probe(object, name)) continue;
      add(root, object, name, true, fmt::format("string \"{}\" in {} of {}", name, section, self));
    }
  }

  // "libcudnn_ops.so" in the shim is the stem of a probed name, not a name of its own.
  bool covered_by_probe(size_t object, const std::string& name) {
    if (version_from_file_name(name) != std::nullopt) return false;
    for (const DlopenRow* row : rows_for(object))
      for (const std::string& opens : row->opens)
        if (is_dotted_extension_of(opens, name)) return true;
    return false;
  }

  Resolver& resolver_;
  const Matrix& matrix_;
  const FileSystem& fs_;
  const FileOwners* owners_;
  HeaderVersions headers_;
  std::unordered_map<size_t, std::vector<std::pair<std::string, std::string>>> by_build_;  // (name, source) by object
  std::map<std::pair<size_t, const DlopenRow*>, std::vector<std::pair<std::string, std::string>>> by_stubs_;
  std::unordered_map<const Binary*, std::vector<std::string>> stubs_;  // XLA stubs in .rodata
  std::map<std::pair<const Binary*, std::string>, std::optional<std::string>> prefixed_;  // first .rodata string with a prefix
  std::unordered_map<const Binary*, std::vector<std::string>> strings_;  // library names in .rodata
  std::map<std::string, std::optional<int>> cuda_major_of_dir_;
  std::unordered_map<size_t, bool> may_infer_;
  std::unordered_map<size_t, std::vector<const DlopenRow*>> rows_;  // rows_for, by object
  std::set<std::tuple<size_t, size_t, std::string>> existing_;  // (root, from, name) of every edge, and of every add
  size_t indexed_edges_ = 0;  // edges already in existing_
};

}  // namespace

void add_dlopen_edges(Resolver& resolver, const Matrix& matrix, const FileSystem& fs,
                      const FileOwners* owners) {
  DlopenEdges(resolver, matrix, fs, owners).run();
}

}  // namespace depscan
