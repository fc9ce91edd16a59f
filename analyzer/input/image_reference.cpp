#include "analyzer/input/image_reference.h"

namespace depscan {

std::string qualified_image_name(std::string_view name) {
  std::string out(name);
  size_t slash = out.find('/');
  std::string_view first = std::string_view(out).substr(0, slash);
  bool has_registry = slash != std::string::npos &&
                      (first.find_first_of(".:") != std::string_view::npos || first == "localhost");
  if (has_registry && first == "index.docker.io") out.replace(0, first.size(), "docker.io");
  if (!has_registry) out = "docker.io/" + out;
  // an official image: docker.io/ubuntu is docker.io/library/ubuntu
  if (out.starts_with("docker.io/") && out.find('/', std::string_view("docker.io/").size()) == std::string::npos)
    out.insert(std::string_view("docker.io/").size(), "library/");
  size_t last_slash = out.rfind('/');
  if (out.find('@') == std::string::npos && out.find(':', last_slash) == std::string::npos) out += ":latest";
  return out;
}

bool same_image_name(std::string_view a, std::string_view b) {
  return !a.empty() && !b.empty() && qualified_image_name(a) == qualified_image_name(b);
}

}  // namespace depscan
