// Image names as Docker reads them: `ubuntu`, `ubuntu:22.04`, `docker.io/library/ubuntu:22.04`
// and `library/ubuntu:22.04` name one image, so `--image` matches what `docker save` recorded
// (manifest.json's RepoTags, or index.json's io.containerd.image.name annotation).
#pragma once

#include <string>
#include <string_view>

namespace depscan {

// The fully qualified form: registry (docker.io when the first component is not a host),
// `library/` for an official image, and `:latest` when neither a tag nor a digest is given.
std::string qualified_image_name(std::string_view name);

bool same_image_name(std::string_view a, std::string_view b);

}  // namespace depscan
