// Which image of several saved together in one archive is audited, and Docker's name rules.
#include <doctest/doctest.h>

#include "analyzer/input/image_reference.h"
#include "analyzer/input/saved_images.h"

using namespace depscan;
using nlohmann::json;

TEST_CASE("image names: Docker's short forms name the fully qualified image") {
  const std::pair<const char*, const char*> cases[] = {
      {"ubuntu", "docker.io/library/ubuntu:latest"},
      {"ubuntu:22.04", "docker.io/library/ubuntu:22.04"},
      {"library/ubuntu:22.04", "docker.io/library/ubuntu:22.04"},
      {"docker.io/ubuntu:22.04", "docker.io/library/ubuntu:22.04"},
      {"index.docker.io/library/ubuntu:22.04", "docker.io/library/ubuntu:22.04"},
      {"nvidia/cuda:13.0.0-runtime-ubuntu24.04", "docker.io/nvidia/cuda:13.0.0-runtime-ubuntu24.04"},
      {"nvcr.io/nvidia/pytorch:25.01-py3", "nvcr.io/nvidia/pytorch:25.01-py3"},
      {"localhost:5000/app", "localhost:5000/app:latest"},
      {"localhost/app:1", "localhost/app:1"},
      {"app@sha256:abcd", "docker.io/library/app@sha256:abcd"},
  };
  for (const auto& [name, qualified] : cases) {
    CAPTURE(name);
    CHECK(qualified_image_name(name) == qualified);
  }
  CHECK(same_image_name("ubuntu", "docker.io/library/ubuntu:latest"));
  CHECK_FALSE(same_image_name("ubuntu:22.04", "ubuntu:24.04"));
  CHECK_FALSE(same_image_name("localhost:5000/app", "app"));
  CHECK_FALSE(same_image_name("", ""));
}

TEST_CASE("manifest.json: one image per entry, every RepoTag names it, an image saved by ID is untagged") {
  json manifest = json::parse(R"([
    {"Config": "c1.json", "RepoTags": ["app:1", "app:2"], "Layers": ["l1"]},
    {"Config": "c2.json", "RepoTags": null, "Layers": ["l2"]},
    {"Config": "c3.json", "RepoTags": ["other:1"], "Layers": ["l3"]}])");
  auto images = images_of_docker_manifest(manifest);
  REQUIRE(images.size() == 3);
  CHECK(images[1].label() == "<untagged>");
  auto second_tag = pick_saved_image(images, std::string("app:2"));
  REQUIRE(second_tag);
  CHECK((*second_tag->entries.front())["Config"] == "c1.json");
  auto first = pick_saved_image(images, std::nullopt);
  REQUIRE(first);
  CHECK(first->several == "the archive holds 3 images (app:1, <untagged>, other:1); only the first it lists, app:1, is audited");
  auto absent = pick_saved_image(images, std::string("app:3"));
  REQUIRE_FALSE(absent);
  CHECK(absent.error() == "the archive has no image named app:3 (it has app:1, <untagged>, other:1); --image picks one");
}

TEST_CASE("index.json: one entry per tag of one digest is one image; unnamed platform entries are one image") {
  json tags = json::parse(R"([
    {"digest": "sha256:aa", "annotations": {"io.containerd.image.name": "docker.io/library/app:1"}},
    {"digest": "sha256:aa", "annotations": {"io.containerd.image.name": "docker.io/library/app:2"}}])");
  auto one = images_of_index(tags);
  REQUIRE(one.size() == 1);
  CHECK(one[0].names.size() == 2);
  CHECK(one[0].entries.size() == 2);
  auto pick = pick_saved_image(one, std::nullopt);
  REQUIRE(pick);
  CHECK(pick->several.empty());

  json platforms = json::parse(R"([
    {"digest": "sha256:01", "platform": {"os": "linux", "architecture": "amd64"}},
    {"digest": "sha256:02", "platform": {"os": "linux", "architecture": "arm64"}}])");
  CHECK(images_of_index(platforms).size() == 1);

  json mixed = json::parse(R"([
    {"digest": "sha256:01"},
    {"digest": "sha256:02", "annotations": {"io.containerd.image.name": "docker.io/library/app:1"}}])");
  auto two = images_of_index(mixed);
  REQUIRE(two.size() == 2);
  CHECK(pick_saved_image(two, std::nullopt)->several.find("holds 2 images (<untagged>, docker.io/library/app:1)") != std::string::npos);

  json many = json::array();
  for (int i = 0; i < 8; ++i) many.push_back({{"digest", "sha256:" + std::to_string(i)}, {"annotations", {{"io.containerd.image.name", "n" + std::to_string(i)}}}});
  auto eight = images_of_index(many);
  REQUIRE(eight.size() == 8);
  CHECK(pick_saved_image(eight, std::nullopt)->several.find("(n0, n1, n2, n3, n4 and 3 more)") != std::string::npos);
}
