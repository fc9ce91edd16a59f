#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/json_writer.h"
#include "report/report.h"

namespace depscan {
namespace {

using nlohmann::json;

// The GPU code listing: targets, PTX ISA versions, container and entry counts.
json cuda_code_json(const CudaCode& code) {
  std::set<std::string> compressions;
  for (const CudaImage& image : code.images)
    compressions.insert(image.compression == CudaCompression::None  ? "none"
                        : image.compression == CudaCompression::Lz4 ? "lz4"
                        : image.compression == CudaCompression::Zstd ? "zstd"
                                                                      : "other");
  size_t device_link = 0;
  for (const CudaContainer& c : code.containers) device_link += c.device_link;
  return {{"sass", code.sass_targets()},       {"ptx", code.ptx_targets()},
          {"ptx_isa", code.ptx_isas()},         {"containers", code.containers.size()},
          {"entries", code.images.size()},      {"device_link_containers", device_link},
          {"compression", compressions},        {"relocatable_ptx_only", code.ptx_only_relocatable()},
          {"found_by_scan", code.found_by_scan}, {"errors", code.errors}};
}

void write_object(JsonWriter& w, const Object& obj) {
  const Binary* b = obj.binary.get();
  w.begin_object();
  if (b) {
    w.key("class");
    w.value(uint64_t(b->bits));
    if (b->cuda_code) {
      w.key("cuda_code");
      w.raw_pretty(cuda_code_json(*b->cuda_code).dump(2, ' ', false, json::error_handler_t::replace));
    }
  } else {
    w.key("error");
    w.value(obj.read_error);
  }
  w.key("format");
  w.value(b ? to_string(b->format) : "unknown");
  if (b) {
    w.key("machine");
    w.value(uint64_t(b->machine));
    w.key("needed");
    w.begin_array();
    for (const std::string& n : b->needed) w.value(n);
    w.end_array();
  }
  if (!obj.owner.empty()) {
    w.key("owner");
    w.value(obj.owner);
  }
  w.key("path");
  w.value(obj.path);
  w.key("realpath");
  w.value(obj.realpath);
  if (b) {
    w.key("rpath");
    w.value_or_null(b->rpath);
    w.key("runpath");
    w.value_or_null(b->runpath);
  }
  w.key("soname");
  w.value_or_null(b ? b->soname : std::nullopt);
  w.end_object();
}

void write_edge(JsonWriter& w, const Edge& e) {
  w.begin_object();
  w.key("attempts");
  w.begin_array();
  for (const Attempt& a : e.tried) {
    w.begin_object();
    w.key("outcome");
    w.value(a.outcome);
    w.key("path");
    w.value(a.path);
    w.end_object();
  }
  w.end_array();
  if (e.filtee != Filtee::None) {
    w.key("filtee");
    w.value(e.filtee == Filtee::Filter ? "filter" : "auxiliary");
  }
  w.key("from");
  w.value(uint64_t(e.from));
  w.key("how");
  w.value(to_string(e.how));
  if (!e.how_detail.empty()) {
    w.key("how_detail");
    w.value(e.how_detail);
  }
  if (e.kind == EdgeKind::Dlopen) {
    w.key("inferred");
    w.value(e.inferred);
  }
  w.key("kind");
  w.value(to_string(e.kind));
  if (e.loaded_first) {
    w.key("loaded_first");
    w.value(true);
  }
  w.key("name");
  w.value(e.name);
  w.key("root");
  w.value(uint64_t(e.root));
  if (e.kind == EdgeKind::Dlopen) {
    w.key("source");
    w.value(e.source);
  }
  if (e.system_provided) {
    w.key("system_provided");
    w.value(true);
  }
  w.key("to");
  w.value_or_null(e.to);
  w.key("tried");
  w.begin_array();
  for (const Attempt& a : e.tried) w.value(a.path);
  w.end_array();
  w.end_object();
}

void write_finding(JsonWriter& w, const Finding& f) {
  w.begin_object();
  w.key("code");
  w.value(f.code);
  if (!f.fix.empty()) {
    w.key("fix");
    w.value(f.fix);
  }
  w.key("message");
  w.value(f.message);
  w.key("object");
  w.value_or_null(f.object);
  if (!f.path.empty()) {
    w.key("path");
    w.value(f.path);
  }
  w.key("severity");
  w.value(to_string(f.severity));
  w.end_object();
}

// Per root: the glibc release of the loader the checks judged it by, whether that loader is
// musl's, and the loader itself when it is the program's own rather than the system's.
void write_root_loader(JsonWriter& w, const RootLoader& loader) {
  w.begin_object();
  w.key("glibc");
  if (loader.release) w.value(fmt::format("{}.{}", loader.release->major, loader.release->minor));
  else w.null();
  w.key("musl");
  w.value(loader.musl);
  w.key("own_loader");
  if (!loader.own.empty()) w.value(loader.own);
  else w.null();
  w.end_object();
}

}  // namespace

// Keys in sorted order: the layout nlohmann::json (a std::map per object) gave the report first.
std::string render_json(const ScanReport& report) {
  const Graph& g = report.result.graph;
  JsonWriter w;
  w.begin_object();
  w.key("edges");
  w.begin_array();
  for (const Edge& e : g.edges) write_edge(w, e);
  w.end_array();
  w.key("findings");
  w.begin_array();
  for (const Finding& f : report.result.findings) write_finding(w, f);
  w.end_array();
  w.key("objects");
  w.begin_array();
  for (const Object& o : g.objects) write_object(w, o);
  w.end_array();
  w.key("root_loaders");
  w.begin_array();
  for (const RootLoader& loader : g.root_loaders) write_root_loader(w, loader);
  w.end_array();
  w.key("roots");
  w.begin_array();
  for (size_t r : g.roots) w.value(uint64_t(r));
  w.end_array();
  w.key("schema");
  w.value("depscan/1");
  w.end_object();
  return w.take();
}

}  // namespace depscan
