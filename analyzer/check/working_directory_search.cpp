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

// Whether the loader takes `entry` as an absolute directory: it starts with '/', or with $ORIGIN or
// ${ORIGIN} (the object's directory). $LIB and $PLATFORM expand to relative names
// (lib/x86_64-linux-gnu, x86_64), and what is no token ($ORIGIN_X, $$ORIGIN) stays as written.
bool is_absolute_entry(std::string_view entry) {
  if (entry.starts_with('/')) return true;
  for (std::string_view origin : {"$ORIGIN", "${ORIGIN}"})
    if (entry.starts_with(origin) && (entry.size() == origin.size() || entry[origin.size()] == '/')) return true;
  return false;
}

struct RelativeEntry {
  std::string text;
  size_t position = 0;  // 1-based, among `count` entries
  size_t count = 0;
};

// The first entry of `list` that the loader takes relative to the working directory, or nullopt.
std::optional<RelativeEntry> working_directory_entry(std::string_view list, bool empty_counts) {
  if (list.empty()) return std::nullopt;  // decompose_rpath ignores an empty list altogether
  std::optional<RelativeEntry> found;
  size_t start = 0, position = 0;
  while (true) {
    size_t end = list.find(':', start);
    std::string_view entry = list.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    ++position;
    if (!found && (entry.empty() ? empty_counts : !is_absolute_entry(entry)))
      found = RelativeEntry{std::string(entry), position, 0};
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  if (found) found->count = position;
  return found;
}

Finding working_directory_finding(size_t index, const Object& o, const char* tag, std::string_view list,
                                  const RelativeEntry& relative) {
  const std::string& entry = relative.text;
  std::string where = fmt::format("entry {} of {}", relative.position, relative.count);
  std::string what = entry.empty() ? fmt::format("an empty {}, which the loader reads as the working directory", where)
                                   : fmt::format("the relative {} '{}', which the loader takes relative to the "
                                                 "working directory, not to the file",
                                                 where, shortened(entry));
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
