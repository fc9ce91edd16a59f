// Which installed distribution ships an object's file: by the path it was opened by, else its
// real path; the first distribution that lists it.
#include <doctest/doctest.h>

#include "analyzer/input/file_owners.h"

using namespace depscan;

namespace {

Distribution distribution(std::string name, std::vector<std::string> files) {
  Distribution d;
  d.name = std::move(name);
  d.version = "1.0";
  d.files = std::move(files);
  return d;
}

Object object(std::string path, std::string realpath) {
  Object o;
  o.path = std::move(path);
  o.realpath = std::move(realpath);
  return o;
}

}  // namespace

TEST_CASE("an object's owner comes from its opened path, then its real path, first distribution first") {
  const std::vector<Distribution> dists = {
      distribution("nvidia-cudnn-cu12", {"/sp/nvidia/cudnn/lib/libcudnn.so.9"}),
      distribution("tensorflow", {"/sp/tensorflow/libtensorflow_framework.so.2", "/sp/nvidia/cudnn/lib/libcudnn.so.9"}),
      distribution("link-farm", {"/sp/links/libtensorflow_framework.so.2"})};
  FileOwners owners(dists);

  const Distribution* by_path = owners.of(object("/sp/nvidia/cudnn/lib/libcudnn.so.9", "/sp/nvidia/cudnn/lib/libcudnn.so.9"));
  REQUIRE(by_path);
  CHECK(by_path->name == "nvidia-cudnn-cu12");

  const Distribution* by_real = owners.of(object("/sp/tensorflow/python/../libtensorflow_framework.so.2",
                                                 "/sp/tensorflow/libtensorflow_framework.so.2"));
  REQUIRE(by_real);
  CHECK(by_real->name == "tensorflow");

  const Distribution* path_first = owners.of(object("/sp/links/libtensorflow_framework.so.2",
                                                    "/sp/tensorflow/libtensorflow_framework.so.2"));
  REQUIRE(path_first);
  CHECK(path_first->name == "link-farm");

  CHECK(owners.of(object("/usr/lib/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6")) == nullptr);
}

TEST_CASE("no distributions own nothing") {
  const std::vector<Distribution> none;
  CHECK(FileOwners(none).of(object("/sp/a.so", "/sp/a.so")) == nullptr);
}
