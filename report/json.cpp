#include <set>

#include <nlohmann/json.hpp>

#include "report/json_text.h"
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

json object_json(const Object& obj) {
  json o = {{"path", obj.path}, {"realpath", obj.realpath}};
  const Binary* b = obj.binary.get();
  o["soname"] = b && b->soname ? json(*b->soname) : json(nullptr);
  o["format"] = b ? to_string(b->format) : "unknown";
  if (b) {
    o["class"] = b->bits;
    o["machine"] = b->machine;
    o["needed"] = b->needed;
    o["rpath"] = b->rpath ? json(*b->rpath) : json(nullptr);
    o["runpath"] = b->runpath ? json(*b->runpath) : json(nullptr);
    if (b->cuda_code) o["cuda_code"] = cuda_code_json(*b->cuda_code);
  } else {
    o["error"] = obj.read_error;
  }
  if (!obj.owner.empty()) o["owner"] = obj.owner;
  return o;
}

json edge_json(const Edge& e) {
  json tried = json::array();
  for (const Attempt& a : e.tried) tried.push_back(a.path);
  json attempts = json::array();
  for (const Attempt& a : e.tried) attempts.push_back({{"path", a.path}, {"outcome", a.outcome}});
  json out = {{"from", e.from}, {"name", e.name}, {"to", e.to ? json(*e.to) : json(nullptr)},
              {"kind", to_string(e.kind)}, {"how", to_string(e.how)}, {"tried", tried},
              {"attempts", attempts}, {"root", e.root}};
  if (!e.how_detail.empty()) out["how_detail"] = e.how_detail;
  if (e.kind == EdgeKind::Dlopen) {
    out["inferred"] = e.inferred;
    out["source"] = e.source;
  }
  return out;
}

json finding_json(const Finding& f) {
  json out = {{"code", f.code}, {"severity", to_string(f.severity)},
              {"object", f.object ? json(*f.object) : json(nullptr)}, {"message", f.message}};
  if (!f.fix.empty()) out["fix"] = f.fix;
  if (!f.path.empty()) out["path"] = f.path;
  return out;
}

}  // namespace

std::string render_json(const ScanReport& report) {
  const Graph& g = report.result.graph;
  json doc = {{"schema", "depscan/1"}};
  json objects = json::array(), edges = json::array(), findings = json::array();
  for (const Object& o : g.objects) objects.push_back(object_json(o));
  for (const Edge& e : g.edges) edges.push_back(edge_json(e));
  for (const Finding& f : report.result.findings) findings.push_back(finding_json(f));
  doc["objects"] = std::move(objects);
  doc["edges"] = std::move(edges);
  doc["findings"] = std::move(findings);
  doc["roots"] = g.roots;
  return json_text(doc);
}

}  // namespace depscan
