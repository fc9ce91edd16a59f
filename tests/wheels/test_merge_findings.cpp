// One file reached by several paths is several objects; what is wrong with it is said once.
#include <doctest/doctest.h>

#include "analyzer/scan/merge_findings.h"

using namespace depscan;

namespace {

Object object(std::string path, std::string realpath) {
  Object o;
  o.path = std::move(path);
  o.realpath = std::move(realpath);
  return o;
}

Finding finding(size_t object, std::string message, Severity severity = Severity::Warning) {
  return Finding{"dlopen-library-not-found", severity, object, std::move(message), "fix", ""};
}

}  // namespace

TEST_CASE("findings that differ only in a path's ../ detour are said once; others stay") {
  ScanResult r;
  const std::string real = "/sp/nvidia/cudnn/lib/libcudnn_graph.so.9";
  r.graph.objects = {object("/sp/tensorflow/python/util/../../../nvidia/cudnn/lib/libcudnn_graph.so.9", real),
                     object("/sp/tensorflow/python/tpu/../../../nvidia/cudnn/lib/libcudnn_graph.so.9", real),
                     object("/sp/nvidia/cudnn/lib/libcudnn_ops.so.9", "/sp/nvidia/cudnn/lib/libcudnn_ops.so.9")};
  auto says = [&](size_t o, const std::string& dir) {
    return r.graph.objects[o].path + " opens libnvrtc.so.12 (tried " + dir + "/libnvrtc.so.12, ld.so.cache)";
  };
  r.findings = {finding(0, says(0, "/sp/tensorflow/python/util/../../../nvidia/cudnn/lib")),
                finding(1, says(1, "/sp/tensorflow/python/tpu/../../../nvidia/cudnn/lib")),  // the same, another path
                finding(1, says(1, "/sp/tensorflow/python/tpu/../../../nvidia/cudnn/lib"), Severity::Error),
                finding(2, says(2, "/sp/nvidia/cudnn/lib")),                                 // another file
                finding(0, says(0, "/sp/other/lib"))};                                       // another list tried
  merge_findings_on_one_file(r);
  REQUIRE(r.findings.size() == 4);
  CHECK(r.findings[0].message.starts_with("/sp/tensorflow/python/util/"));  // the first one is kept as it was
  CHECK(r.findings[1].severity == Severity::Error);
  CHECK(r.findings[2].object == 2u);
  CHECK(r.findings[3].message.ends_with("(tried /sp/other/lib/libnvrtc.so.12, ld.so.cache)"));
}
