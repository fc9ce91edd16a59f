// The glibc release a check judges an object by: that of the loader its program runs under, as
// the resolver followed it (Graph::root_loaders): the program's own loader (PT_INTERP naming
// another glibc's) or the system's default for its class and machine.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyzer/model.h"

namespace depscan {

class LoaderReleases {
 public:
  explicit LoaderReleases(const Graph& graph) : graph_(graph) {}

  const std::optional<GlibcRelease>& of_root(size_t root_index) const;
  // An object several roots load is judged by the first of them.
  const std::optional<GlibcRelease>& of_object(size_t object);
  // Whether that loader is musl's, which has none of glibc's release rules.
  bool musl_root(size_t root_index) const;
  bool musl_object(size_t object);
  // Who has which release, to end a message: "the analysed system has glibc 2.41", "the program
  // runs under its own loader /opt/glibc/lib/ld-linux-x86-64.so.2, glibc 2.36", or that it is unknown.
  std::string describe(size_t root_index) const;

 private:
  const Graph& graph_;
  size_t first_root(size_t object);
  std::vector<size_t> first_root_;  // per object; filled on first use
};

}  // namespace depscan
