// RPATH and RUNPATH entries that make the loader search the process's working directory: an empty
// entry (a stray ':', which glibc's fillin_rpath reads as "./") and a relative one ("lib", taken
// relative to the working directory, not to the file as $ORIGIN/lib is). Whoever controls the
// directory a program is started from can then put a library of a needed name there and have its
// code run. musl passes over empty entries, so they count only where a root uses glibc's loader.
#include <set>

#include <fmt/format.h>

#include "analyzer/check/check.h"
#include "analyzer/util/listing.h"

namespace depscan {
namespace {

bool any_glibc_root(const Graph& g) {
  if (g.root_loaders.size() < g.roots.size()) return true;
  for (const RootLoader& loader : g.root_loaders)
    if (!loader.musl) return true;
  return false;
}

// The first entry of `list` that the loader takes relative to the working directory, or nullopt.
// An entry starting with '$' is a dynamic string token ($ORIGIN), expanded before use.
std::optional<std::string> working_directory_entry(std::string_view list, bool empty_counts) {
  if (list.empty()) return std::nullopt;  // decompose_rpath ignores an empty list altogether
  size_t start = 0;
  while (true) {
    size_t end = list.find(':', start);
    std::string_view entry = list.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (entry.empty() ? empty_counts : entry[0] != '/' && entry[0] != '$') return std::string(entry);
    if (end == std::string_view::npos) return std::nullopt;
    start = end + 1;
  }
}

Finding working_directory_finding(size_t index, const Object& o, const char* tag, std::string_view list,
                                  const std::string& entry) {
  std::string what = entry.empty() ? "an empty entry, which the loader reads as the working directory"
                                   : fmt::format("the relative entry '{}', which the loader takes relative to the "
                                                 "working directory, not to the file",
                                                 shortened(entry));
  return Finding{"search-path-working-directory", Severity::Warning, index,
                 fmt::format("{} has {} '{}' with {}: the libraries it needs are looked for in whatever directory "
                             "the process is started from, so a file of a needed name placed there is loaded and its "
                             "code runs", o.path, tag, shortened(list), what),
                 entry.empty() ? fmt::format("remove the stray ':' from the {} (patchelf --set-rpath)", tag)
                               : fmt::format("use $ORIGIN/{} or an absolute directory in the {} (patchelf --set-rpath)",
                                             shortened(entry), tag),
                 ""};
}

}  // namespace

std::vector<Finding> check_working_directory_search(const CheckContext& ctx) {
  std::vector<Finding> out;
  const Graph& g = ctx.graph;
  bool empty_counts = any_glibc_root(g);
  std::set<std::string> seen;  // one finding per file, however many paths reach it
  for (size_t i = 0; i < g.objects.size(); ++i) {
    const Object& o = g.objects[i];
    if (!o.binary || o.binary->format != Format::Elf) continue;
    const Binary& b = *o.binary;
    // An object with DT_RUNPATH has its DT_RPATH dropped (elf_get_dynamic_info).
    const std::optional<std::string>& list = b.runpath ? b.runpath : b.rpath;
    if (!list) continue;
    auto entry = working_directory_entry(*list, empty_counts);
    if (!entry || !seen.insert(o.realpath.empty() ? o.path : o.realpath).second) continue;
    out.push_back(working_directory_finding(i, o, b.runpath ? "RUNPATH" : "RPATH", *list, *entry));
  }
  return out;
}

}  // namespace depscan
