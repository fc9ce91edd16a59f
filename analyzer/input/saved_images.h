// The images saved together in one archive (`docker save a b`): manifest.json lists one entry per
// image with its RepoTags; index.json lists one entry per tag (Docker 25+), or the platforms of one
// image. Entries that share a digest or a name are one image.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analyzer/util/expected.h"

namespace depscan {

inline constexpr std::string_view kNoImageNamed = "the archive has no image named ";

// Pointers to an array's elements, not copies: a hostile entry may nest deeper than a recursive
// copy's stack allows. Empty for anything but an array.
std::vector<const nlohmann::json*> json_elements(const nlohmann::json& array);

struct SavedImage {
  std::vector<std::string> names;                // as recorded; empty for an untagged image
  std::vector<const nlohmann::json*> entries;    // the archive's entries for it, in order
  std::string label() const;                     // its first name, or "<untagged>"
};

// From index.json's top-level "manifests" array and from manifest.json's array.
std::vector<SavedImage> images_of_index(const nlohmann::json& manifests);
std::vector<SavedImage> images_of_docker_manifest(const nlohmann::json& manifest);

struct ImagePick {
  std::vector<const nlohmann::json*> entries;  // the chosen image's
  std::string several;                         // "" or the warning: which images were not audited
};

// The image `wanted` names (Docker's name rules), else the first listed.
Expected<ImagePick> pick_saved_image(const std::vector<SavedImage>& images, const std::optional<std::string>& wanted);

}  // namespace depscan
