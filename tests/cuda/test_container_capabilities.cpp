// NVIDIA_DRIVER_CAPABILITIES as the NVIDIA Container Toolkit's hook reads it (getDriverCapabilities
// and its test table in cmd/nvidia-container-runtime-hook), and the driver libraries `docker run
// --gpus` then leaves out of a container.
#include <algorithm>
#include <map>
#include <memory>

#include <doctest/doctest.h>

#include "analyzer/check/container_capabilities.h"
#include "analyzer/check/driver_libraries.h"
#include "embedded_matrix.h"

using namespace depscan;

namespace {

const DriverLibraries& table() {
  const auto& loaded = load_driver_libraries();
  REQUIRE_MESSAGE(loaded, (loaded ? "" : loaded.error()));
  return *loaded;
}

std::string selected(std::optional<std::string> setting, bool legacy = false) {
  SelectedCapabilities s = selected_capabilities(table(), setting, legacy);
  std::string out;
  for (const std::string& name : s.names) out += (out.empty() ? "" : ",") + name;
  for (const std::string& name : s.unknown) out += " unknown:" + name;
  return out;
}

const char* capability(const char* library) {
  const DriverCapability* c = table().capability_of(library);
  return c ? c->name.c_str() : "none";
}

}  // namespace

TEST_CASE("the driver's libraries by capability, as libnvidia-container lists them") {
  CHECK(std::string(capability("libcuda.so.1")) == "compute");
  CHECK(std::string(capability("libcuda.so")) == "compute");
  CHECK(std::string(capability("libcudadebugger.so.1")) == "compute");
  CHECK(std::string(capability("libnvidia-ptxjitcompiler.so.1")) == "compute");
  CHECK(std::string(capability("libnvidia-ml.so.1")) == "utility");
  CHECK(std::string(capability("libnvcuvid.so.1")) == "video");
  CHECK(std::string(capability("libnvidia-encode.so.1")) == "video");
  CHECK(std::string(capability("libGLX_nvidia.so.0")) == "graphics");
  CHECK(std::string(capability("libnvidia-ngx.so.1")) == "ngx");
  // a prefix ends at a dot: the runtime and other projects' libraries are not the driver's
  CHECK(std::string(capability("libcudart.so.12")) == "none");
  CHECK(std::string(capability("libnvidia-mlx.so.1")) == "none");
  CHECK(std::string(capability("libnvrtc.so.13")) == "none");
}

TEST_CASE("NVIDIA_DRIVER_CAPABILITIES: what the hook selects, as its own tests have it") {
  const std::string every = "compat32,compute,display,graphics,ngx,utility,video";
  CHECK(selected("display,video", true) == "display,video");
  CHECK(selected("all", true) == every);
  CHECK(selected("", true) == "compute,utility");     // set and empty: the default, even for a legacy image
  CHECK(selected(std::nullopt, true) == every);       // unset in a legacy image (CUDA_VERSION only): all
  CHECK(selected("display,video") == "display,video");
  CHECK(selected(std::nullopt) == "compute,utility");
  CHECK(selected("all") == every);
  CHECK(selected("") == "compute,utility");
  CHECK(selected(" compute , ,utility,") == "compute,utility");  // parts trimmed, empty parts dropped
  CHECK(selected(" ").empty());                                  // set, not empty, names nothing: nothing
  CHECK(selected("video,all,bogus") == every);                   // "all" wins, and nothing is refused
  CHECK(selected("compute,vidoe") == "compute unknown:vidoe");
  CHECK(selected("Compute") == " unknown:Compute");              // names are case-sensitive
  CHECK(selected("none") == " unknown:none");
  // Go's strings.TrimSpace trims Unicode spaces too: NBSP, NEL, the ideographic space
  CHECK(selected("compute,utility,\u00a0") == "compute,utility");
  CHECK(selected("compute,\u0085video\u3000") == "compute,video");
  CHECK(selected("compute,\u2003utility") == "compute,utility");
}

TEST_CASE("NVIDIA_DRIVER_CAPABILITIES: the library lists each capability mounts (libnvidia-container's options.h)") {
  auto mounted = [](const char* setting) {
    SelectedCapabilities s = selected_capabilities(table(), std::string(setting), false);
    std::vector<std::string> lists = s.mounted;
    std::sort(lists.begin(), lists.end());
    std::string out;
    for (const std::string& list : lists) out += (out.empty() ? "" : ",") + list;
    return out;
  };
  CHECK(mounted("video,utility") == "compute,utility,video");  // video mounts the compute libraries too
  CHECK(mounted("display") == "graphics");
  CHECK(mounted("compat32") == "");
  CHECK(mounted("all") == "compute,graphics,ngx,utility,video");
}

TEST_CASE("driver libraries the hook leaves out of a container: who needs them and how badly") {
  Graph g;
  for (const char* path : {"/usr/bin/app", "/usr/lib/libcudart.so.12", "/usr/lib/plugin.so", "/usr/local/cuda/compat/libcuda.so.1"})
  {
    Object o;
    o.path = path;
    g.objects.push_back(o);
  }
  g.roots = {0, 1, 2};
  auto edge = [&](size_t from, const char* name, EdgeKind kind, bool inferred = false, std::optional<size_t> to = {}) {
    Edge e;
    e.from = from;
    e.name = name;
    e.kind = kind;
    e.inferred = inferred;
    e.to = to;
    g.edges.push_back(e);
  };
  edge(0, "libnvcuvid.so.1", EdgeKind::Needed);
  edge(1, "libcuda.so.1", EdgeKind::Dlopen);
  edge(2, "libnvidia-encode.so.1", EdgeKind::Dlopen, true);  // a name found in strings: may be optional
  edge(0, "libfoo.so.1", EdgeKind::Needed);                  // not the driver's: library-not-found's business
  edge(0, "libnvidia-ml.so.1", EdgeKind::Preload);           // the loader skips a preload it cannot open
  edge(2, "/usr/lib64/libnvidia-opticalflow.so.1", EdgeKind::Dlopen);  // opened by its path
  edge(0, "libnvidia-opticalflow.so.1", EdgeKind::Needed);               // and by name: still one finding
  ImageEnvironment env;
  env.config_read = true;
  env.driver_capabilities = "graphics";
  auto findings = check_container_capabilities(g, embedded_matrix(), env, "image.tar");
  REQUIRE(findings.size() == 5);
  std::map<std::string, const Finding*> by_library;
  for (const Finding& f : findings) {
    CHECK(f.code == "container-driver-capabilities");
    CHECK(f.path == "image.tar");
    CHECK(f.fix.find("ENV NVIDIA_DRIVER_CAPABILITIES=graphics,compute,utility,video") != std::string::npos);  // all it lacks, once
    for (const char* library : {"libcuda.so.1", "libnvcuvid.so.1", "libnvidia-encode.so.1", "libnvidia-ml.so.1",
                                "libnvidia-opticalflow.so.1"})
      if (f.message.find(std::string("does not mount ") + library) != std::string::npos) by_library[library] = &f;
  }
  REQUIRE(by_library.size() == 5);
  CHECK(by_library["libnvidia-ml.so.1"]->severity == Severity::Warning);
  CHECK(by_library["libnvidia-ml.so.1"]->message.find("(needed by /usr/bin/app (preload))") != std::string::npos);
  CHECK(by_library["libnvidia-opticalflow.so.1"]->severity == Severity::Error);
  CHECK(by_library["libnvidia-opticalflow.so.1"]->message.find(
            "(needed by /usr/lib/plugin.so (dlopen of /usr/lib64/libnvidia-opticalflow.so.1), /usr/bin/app)") !=
        std::string::npos);
  CHECK(by_library["libcuda.so.1"]->severity == Severity::Error);
  CHECK(by_library["libcuda.so.1"]->message.find("CUDA driver version is insufficient") != std::string::npos);
  CHECK(by_library["libcuda.so.1"]->message.find("(needed by /usr/lib/libcudart.so.12 (dlopen))") != std::string::npos);
  CHECK(by_library["libnvcuvid.so.1"]->severity == Severity::Error);
  CHECK(by_library["libnvcuvid.so.1"]->message.find("NVIDIA_DRIVER_CAPABILITIES=\"graphics\" selects graphics") != std::string::npos);
  CHECK(by_library["libnvidia-encode.so.1"]->severity == Severity::Warning);

  // video mounts the compute libraries too; the image's own copy (a cuda-compat libcuda) needs no mount
  env.driver_capabilities = "utility,video";
  CHECK(check_container_capabilities(g, embedded_matrix(), env, "image.tar").empty());
  g.edges[1].to = 3;
  env.driver_capabilities = std::nullopt;  // the default: compute and utility
  auto by_default = check_container_capabilities(g, embedded_matrix(), env, "image.tar");
  CHECK(by_default.size() == 3);  // libnvcuvid, libnvidia-encode and libnvidia-opticalflow
  env.legacy_cuda_image = true;   // unset in a legacy image: every capability
  CHECK(check_container_capabilities(g, embedded_matrix(), env, "image.tar").empty());
  env.config_read = false;        // nothing known about the container's environment
  env.legacy_cuda_image = false;
  CHECK(check_container_capabilities(g, embedded_matrix(), env, "image.tar").empty());
}

TEST_CASE("a driver library needed only by a plugin that an optional dlopen opens is a warning") {
  // libcufile.so.0 opens its RDMA plugin only when RDMA is asked for (the matrix marks it optional)
  Graph g;
  for (const char* path : {"/usr/lib/libcufile.so.0", "/usr/lib/libcufile_rdma.so.1"}) {
    Object o;
    o.path = path;
    g.objects.push_back(o);
  }
  g.roots = {0};
  Edge plugin;
  plugin.from = 0;
  plugin.name = "libcufile_rdma.so.1";
  plugin.kind = EdgeKind::Dlopen;
  plugin.to = 1;
  Edge video;
  video.from = 1;
  video.name = "libnvcuvid.so.1";
  Edge encoder = video;  // and opens another with dlopen
  encoder.name = "libnvidia-encode.so.1";
  encoder.kind = EdgeKind::Dlopen;
  g.edges = {plugin, video, encoder};
  ImageEnvironment env;
  env.config_read = true;
  auto findings = check_container_capabilities(g, embedded_matrix(), env, "image.tar");
  REQUIRE(findings.size() == 2);
  CHECK(findings[0].severity == Severity::Warning);
  CHECK(findings[1].severity == Severity::Warning);
  g.roots = {1};  // the plugin scanned as a root of its own needs it
  g.edges[1].root = 0;
  g.edges = {g.edges[1]};
  findings = check_container_capabilities(g, embedded_matrix(), env, "image.tar");
  REQUIRE(findings.size() == 1);
  CHECK(findings[0].severity == Severity::Error);
}

TEST_CASE("a 32-bit program gets the driver's 32-bit libraries only with compat32") {
  Graph g;
  Object program;
  program.path = "/opt/game/bin/game32";
  auto binary = std::make_shared<Binary>();
  binary->bits = 32;
  program.binary = binary;
  g.objects = {program};
  g.roots = {0};
  Edge cuda;
  cuda.name = "libcuda.so.1";
  g.edges = {cuda};
  ImageEnvironment env;
  env.config_read = true;
  auto only = [&](const char* setting) {
    env.driver_capabilities = setting;
    auto findings = check_container_capabilities(g, embedded_matrix(), env, "image.tar");
    REQUIRE(findings.size() <= 1);
    return findings.empty() ? std::string("none") : findings[0].message + "\nfix: " + findings[0].fix;
  };
  CHECK(only("compute,utility,compat32") == "none");
  std::string lacks_compat32 = only("compute,utility");
  CHECK(lacks_compat32.find("does not mount the 32-bit libcuda.so.1") != std::string::npos);
  CHECK(lacks_compat32.find("fix: add compat32 to the image's capabilities (ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility,compat32)") !=
        std::string::npos);
  std::string lacks_both = only("utility");
  CHECK(lacks_both.find("fix: add compute and compat32 to the image's capabilities "
                        "(ENV NVIDIA_DRIVER_CAPABILITIES=utility,compute,compat32)") != std::string::npos);
  CHECK(lacks_both.find("does not mount libcuda.so.1") != std::string::npos);  // the 64-bit copy is not mounted either
  // a 64-bit program beside it: the 32-bit copy alone is missing only for the 32-bit one
  Object program64 = g.objects[0];
  program64.path = "/opt/app/bin/app64";
  program64.binary = std::make_shared<Binary>();
  std::const_pointer_cast<Binary>(program64.binary)->bits = 64;
  g.objects.push_back(program64);
  g.roots.push_back(1);
  Edge cuda64 = g.edges[0];
  cuda64.from = 1;
  cuda64.root = 1;
  g.edges.push_back(cuda64);
  std::string mixed = only("utility");
  CHECK(mixed.find("does not mount libcuda.so.1") != std::string::npos);
  CHECK(mixed.find("(needed by /opt/game/bin/game32, /opt/app/bin/app64)") != std::string::npos);
  CHECK(only("compute").find("does not mount the 32-bit libcuda.so.1") != std::string::npos);
  CHECK(only("compute").find("(needed by /opt/game/bin/game32)") != std::string::npos);
  g.objects.pop_back();
  g.roots.pop_back();
  g.edges.pop_back();
  binary->bits = 64;
  CHECK(only("compute,utility") == "none");
}

TEST_CASE("a capability the hook does not know stops the container, whatever it needs") {
  ImageEnvironment env;
  env.config_read = true;
  env.driver_capabilities = "compute,utility,vidoe";
  auto findings = check_container_capabilities(Graph{}, embedded_matrix(), env, "image.tar");
  REQUIRE(findings.size() == 1);
  CHECK(findings[0].severity == Severity::Error);
  CHECK(findings[0].message.find("refuses to start a GPU container of this image: NVIDIA_DRIVER_CAPABILITIES=\"compute,utility,vidoe\" "
                                 "names vidoe") != std::string::npos);
  CHECK(findings[0].fix.find("compute, compat32, graphics, utility, video, display, ngx") != std::string::npos);
  // a long value is shortened where a UTF-8 character begins
  env.driver_capabilities = "compute," + std::string(111, 'x') + "\u00e9\u00e9\u00e9";
  findings = check_container_capabilities(Graph{}, embedded_matrix(), env, "image.tar");
  REQUIRE(findings.size() == 1);
  CHECK(findings[0].message.find("compute," + std::string(111, 'x') + "...\"") != std::string::npos);  // not half an é
}
