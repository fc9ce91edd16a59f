#include "loader/prediction.h"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "analyzer/input/fs.h"
#include "analyzer/read/read.h"
#include "analyzer/resolve/resolve.h"

namespace depscan {
namespace {

// N of "<stem>.so.N" (with at most `max_parts` numbers after ".so.": libcudart.so.11.0), or
// nullopt. Names come from the analysed files, so they are parsed without std::regex, which
// recurses per character, and without std::stoi, which throws on a number too large.
std::optional<int> soname_major(std::string_view name, std::string_view stem, size_t max_parts = 1) {
  std::string prefix = std::string(stem) + ".so.";
  if (!name.starts_with(prefix)) return std::nullopt;
  std::optional<Version> v = Version::parse(name.substr(prefix.size()));
  if (!v || v->parts.size() > max_parts) return std::nullopt;
  return v->major();
}

std::optional<int> cudnn_major_of(std::string_view name) { return soname_major(name, "libcudnn"); }

struct Session {
  Resolver& resolver;
  size_t root_index;
  size_t root_object;
};

std::optional<size_t> find_edge(const Graph& g, const std::string& name, std::optional<size_t> from = std::nullopt) {
  for (size_t i = 0; i < g.edges.size(); ++i)
    if (g.edges[i].name == name && (!from || g.edges[i].from == *from)) return i;
  return std::nullopt;
}

PredictedLibrary library_of(const Graph& g, const Edge& e) {
  PredictedLibrary lib{e.name, std::nullopt, to_string(e.how)};
  if (e.to && *e.to < g.objects.size()) lib.path = canonical_or_same(g.objects[*e.to].realpath);
  return lib;
}

// The edge for dlopen(name) from `from`: one the graph already has, or a new one. nullopt when
// the resolver gives no answer at all.
std::optional<size_t> dlopen_edge(Session& s, size_t from, const std::string& name) {
  if (auto e = find_edge(s.resolver.graph(), name, from)) return e;
  if (from >= s.resolver.graph().objects.size() || !s.resolver.graph().objects[from].binary) return std::nullopt;
  size_t e = s.resolver.add_dlopen(s.root_index, from, name, false, "depscan --verify");
  const Graph& g = s.resolver.graph();
  if (e < g.edges.size() && g.edges[e].name == name) return e;
  return std::nullopt;
}

std::vector<std::string> cudnn_names_in(const Graph& g, const ScanReport& report) {
  std::vector<std::string> names;
  auto consider = [&](const std::string& n) {
    if (cudnn_major_of(n) && std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  };
  for (const Edge& e : g.edges) consider(e.name);
  for (const Edge& e : report.result.graph.edges) consider(e.name);
  for (const Object& o : g.objects)
    if (o.binary)
      for (const std::string& n : o.binary->needed) consider(n);
  return names;
}

// The release a cuDNN file says it is, as the scan reads it: its file name (libcudnn.so.9.19.0),
// else cudnn_version.h in the include directories beside it.
std::optional<SourcedVersion> cudnn_version_of(const std::string& path, int major) {
  std::string file = basename_of(path);
  if (auto v = version_from_file_name(file, 3); v && v->major() == major) return SourcedVersion{*v, "file name " + file};
  return cudnn_header_version(*make_real_fs(), dirname_of(path), major);
}

// The first name that resolves wins (the probe tries them in the same order); if none does,
// the prediction is that the first one is not found.
void predict_cudnn(Session& s, Prediction& p) {
  std::optional<size_t> chosen;
  for (const std::string& name : p.cudnn_names) {
    std::optional<size_t> e = find_edge(s.resolver.graph(), name);
    if (!e) e = dlopen_edge(s, s.root_object, name);
    if (!e) continue;
    if (!chosen) chosen = e;
    if (s.resolver.graph().edges[*e].to) {
      chosen = e;
      break;
    }
  }
  if (!chosen) return;
  const Edge edge = s.resolver.graph().edges[*chosen];
  p.cudnn = library_of(s.resolver.graph(), edge);
  if (edge.name.find('/') != std::string::npos) p.cudnn->how = to_string(How::DirectPath);  // the probe loads it first
  std::optional<int> major = cudnn_major_of(basename_of(edge.name));  // the name, or the shim's own path (root_is_cudnn)
  if (!major && edge.to) {  // a path whose file name is not the SONAME (libcudnn.so.9.19.0)
    const Object& shim = s.resolver.graph().objects[*edge.to];
    if (shim.binary && shim.binary->soname) major = cudnn_major_of(*shim.binary->soname);
  }
  p.cudnn_major = major.value_or(0);
  if (!p.cudnn->path) return;
  p.cudnn_version = cudnn_version_of(*p.cudnn->path, p.cudnn_major);
  size_t cudnn_object = *edge.to;
  for (const std::string& sub : cudnn_sublibrary_names(p.cudnn_major))
    if (auto se = dlopen_edge(s, cudnn_object, sub)) p.sublibraries.push_back(library_of(s.resolver.graph(), s.resolver.graph().edges[*se]));
  if (auto de = dlopen_edge(s, cudnn_object, "libcuda.so.1")) p.driver = library_of(s.resolver.graph(), s.resolver.graph().edges[*de]);
  if (p.cudnn->how == to_string(How::Rpath)) p.dirs_before_ld_library_path.push_back(dirname_of(*p.cudnn->path));
  if (p.cudnn->how == to_string(How::Runpath)) p.dirs_after_ld_library_path.push_back(dirname_of(*p.cudnn->path));
}

// The CUDA major of the libraries the scan says the predicted cuDNN install opens (its sub-libraries
// open libcublasLt.so.N and libnvrtc.so.N of the CUDA major they were built for).
void predict_cudnn_cuda_major(const Graph& scanned, Prediction& p) {
  std::string dir = dirname_of(*p.cudnn->path);
  for (const Edge& e : scanned.edges) {
    std::optional<int> major = soname_major(e.name, "libcublasLt");
    if (!major) major = soname_major(e.name, "libnvrtc");
    if (!major || e.from >= scanned.objects.size()) continue;
    const Object& from = scanned.objects[e.from];
    if (dirname_of(canonical_or_same(from.realpath.empty() ? from.path : from.realpath)) != dir) continue;
    p.cudnn_cuda_major = *major;
    p.cudnn_cuda_evidence = fmt::format("{} opens {}", basename_of(from.path), e.name);
    return;
  }
}

// Whether the object whose rules apply is cuDNN's shim itself (`depscan --verify libcudnn.so.9`):
// then that file is the cuDNN to load, by its path.
bool root_is_cudnn(const Graph& g, size_t root_object) {
  const Object& o = g.objects.at(root_object);
  return o.binary && o.binary->soname && cudnn_major_of(*o.binary->soname);
}

std::optional<int> cudart_major_in(const Graph& g) {
  for (const Object& o : g.objects) {
    std::string name = o.binary && o.binary->soname ? *o.binary->soname : basename_of(o.path);
    if (auto major = soname_major(name, "libcudart", 2)) return major;
  }
  return std::nullopt;
}

bool is_elf_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  return in.read(magic, 4) && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' && magic[3] == 'F';
}

// Whose search rules the probe reproduces: the input when it is an ELF file; for a directory or
// an environment, the object in the scan's graph that asks for cuDNN.
std::string root_for(const ScanOptions& options, const ScanReport& report, const std::string& self_exe) {
  if (options.inputs.empty()) return self_exe;
  std::string first = absolute_path(options.inputs.front());
  if (is_elf_file(first)) return first;
  const Graph& g = report.result.graph;
  for (const Edge& e : g.edges)
    if (cudnn_major_of(e.name) && e.from < g.objects.size()) return g.objects[e.from].path;
  return first;
}

}  // namespace

std::vector<std::string> cudnn_sublibrary_names(int major) {
  if (major >= 9)
    return {"libcudnn_graph.so.9", "libcudnn_ops.so.9", "libcudnn_cnn.so.9", "libcudnn_adv.so.9",
            "libcudnn_engines_precompiled.so.9", "libcudnn_engines_runtime_compiled.so.9",
            "libcudnn_heuristic.so.9"};
  if (major == 8)
    return {"libcudnn_ops_infer.so.8", "libcudnn_ops_train.so.8", "libcudnn_cnn_infer.so.8",
            "libcudnn_cnn_train.so.8", "libcudnn_adv_infer.so.8", "libcudnn_adv_train.so.8"};
  return {};
}

bool is_stub_driver_path(const std::string& path) { return path.find("/stubs/") != std::string::npos; }

std::string canonical_or_same(const std::string& path) {
  std::error_code ec;
  auto c = std::filesystem::canonical(path, ec);
  return ec ? path : c.string();
}

Prediction predict(const ScanOptions& options, const ScanReport& report, const std::string& self_exe) {
  Prediction p;
  bool local = options.inputs.empty();
  p.subject = local ? "this machine's stack" : options.inputs.front();
  p.local_stack = local;
  p.root = root_for(options, report, self_exe);
  auto fs = make_real_fs();
  BinaryCache cache(*fs);
  Resolver resolver(cache, resolve_options_for(options));
  size_t root_index = resolver.add_root(p.root);
  Session s{resolver, root_index, resolver.graph().roots.at(root_index)};
  p.cudnn_names = cudnn_names_in(resolver.graph(), report);
  if (p.cudnn_names.empty() && local) p.cudnn_names = {"libcudnn.so.9", "libcudnn.so.8"};
  if (p.cudnn_names.empty() && root_is_cudnn(resolver.graph(), s.root_object)) p.cudnn_names = {p.root};
  predict_cudnn(s, p);
  if (!p.driver) {
    if (auto de = dlopen_edge(s, s.root_object, "libcuda.so.1")) p.driver = library_of(resolver.graph(), resolver.graph().edges[*de]);
  }
  if (p.cudnn && p.cudnn->path) predict_cudnn_cuda_major(report.result.graph, p);
  p.cudart_major = cudart_major_in(report.result.graph);
  if (!p.cudart_major) p.cudart_major = cudart_major_in(resolver.graph());
  for (const char* name : {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"}) {
    if (p.cudart_major || !local) break;
    auto e = dlopen_edge(s, s.root_object, name);
    if (e && resolver.graph().edges[*e].to) p.cudart_major = soname_major(name, "libcudart", 2);
  }
  for (const Finding& f : report.result.findings)
    if (f.code == "cuda-driver-too-old") p.driver_too_old = true;
  for (const Object& o : resolver.graph().objects) p.graph_objects.push_back(canonical_or_same(o.realpath));
  return p;
}

}  // namespace depscan
