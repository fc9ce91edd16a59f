#include "analyzer/input/saved_images.h"

#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analyzer/input/image_reference.h"

namespace depscan {
namespace {

constexpr size_t kNamesShown = 5;

std::string string_at(const nlohmann::json& object, const char* key) {
  return object.is_object() && object.contains(key) && object.at(key).is_string() ? object.at(key).get<std::string>() : "";
}

// Entries joined into images: those that share a key (a digest, a name) are one image.
class ImageGrouping {
 public:
  explicit ImageGrouping(size_t entries) : parent_(entries) { std::iota(parent_.begin(), parent_.end(), size_t{0}); }

  void share(const std::string& key, size_t entry) {
    if (key.empty()) return;
    auto [it, first] = first_with_.emplace(key, entry);
    if (!first) parent_[root(entry)] = root(it->second);
  }

  std::vector<SavedImage> images(const std::vector<const nlohmann::json*>& entries,
                                 const std::vector<std::vector<std::string>>& names) {
    std::vector<SavedImage> out;
    std::unordered_map<size_t, size_t> image_of_root;
    std::unordered_set<std::string> named;  // "<image>\n<name>": a name is listed once per image
    for (size_t i = 0; i < entries.size(); ++i) {
      auto [it, added] = image_of_root.emplace(root(i), out.size());
      if (added) out.emplace_back();
      SavedImage& image = out[it->second];
      image.entries.push_back(entries[i]);
      for (const std::string& name : names[i])
        if (named.insert(fmt::format("{}\n{}", it->second, name)).second) image.names.push_back(name);
    }
    return out;
  }

 private:
  size_t root(size_t i) {
    while (parent_[i] != i) i = parent_[i] = parent_[parent_[i]];
    return i;
  }
  std::vector<size_t> parent_;
  std::unordered_map<std::string, size_t> first_with_;
};

std::string listed(const std::vector<SavedImage>& images) {
  std::vector<std::string> labels;
  for (size_t i = 0; i < images.size() && i < kNamesShown; ++i) labels.push_back(images[i].label());
  std::string more = images.size() > kNamesShown ? fmt::format(" and {} more", images.size() - kNamesShown) : "";
  return fmt::format("{}{}", fmt::join(labels, ", "), more);
}

}  // namespace

std::vector<const nlohmann::json*> json_elements(const nlohmann::json& array) {
  std::vector<const nlohmann::json*> out;
  if (array.is_array())
    for (const auto& element : array) out.push_back(&element);
  return out;
}

std::string SavedImage::label() const { return names.empty() ? "<untagged>" : names.front(); }

// An entry names its image by io.containerd.image.name (Docker 25+, containerd) or, from other
// tools, org.opencontainers.image.ref.name. Unnamed entries with a platform are the platforms of
// one image.
std::vector<SavedImage> images_of_index(const nlohmann::json& manifests) {
  std::vector<const nlohmann::json*> entries = json_elements(manifests);
  std::vector<std::vector<std::string>> names;
  ImageGrouping grouping(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    const nlohmann::json& entry = *entries[i];
    const nlohmann::json* annotations = entry.is_object() && entry.contains("annotations") ? &entry.at("annotations") : nullptr;
    std::string name = annotations ? string_at(*annotations, "io.containerd.image.name") : "";
    if (name.empty() && annotations) name = string_at(*annotations, "org.opencontainers.image.ref.name");
    names.push_back(name.empty() ? std::vector<std::string>{} : std::vector<std::string>{name});
    grouping.share("digest " + string_at(entry, "digest"), i);
    if (!name.empty()) grouping.share("name " + qualified_image_name(name), i);
    else if (entry.is_object() && entry.contains("platform")) grouping.share("platforms", i);
  }
  return grouping.images(entries, names);
}

// One entry per image, its tags in RepoTags (none for an image saved by ID).
std::vector<SavedImage> images_of_docker_manifest(const nlohmann::json& manifest) {
  std::vector<const nlohmann::json*> entries = json_elements(manifest);
  std::vector<std::vector<std::string>> names;
  ImageGrouping grouping(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    std::vector<std::string> tags;
    const nlohmann::json& entry = *entries[i];
    if (entry.is_object() && entry.contains("RepoTags") && entry.at("RepoTags").is_array())
      for (const auto& tag : entry.at("RepoTags"))
        if (tag.is_string()) tags.push_back(tag.get<std::string>());
    names.push_back(std::move(tags));
    grouping.share("config " + string_at(entry, "Config"), i);
  }
  return grouping.images(entries, names);
}

Expected<ImagePick> pick_saved_image(const std::vector<SavedImage>& images, const std::optional<std::string>& wanted) {
  if (images.empty()) return Error{"the archive lists no image"};
  if (wanted) {
    for (const SavedImage& image : images)
      for (const std::string& name : image.names)
        if (same_image_name(name, *wanted)) return ImagePick{image.entries, ""};
    return Error{fmt::format("{}{} (it has {}); --image picks one", kNoImageNamed, *wanted, listed(images))};
  }
  ImagePick pick{images.front().entries, ""};
  if (images.size() > 1)
    pick.several = fmt::format("the archive holds {} images ({}); only the first it lists, {}, is audited",
                               images.size(), listed(images), images.front().label());
  return pick;
}

}  // namespace depscan
