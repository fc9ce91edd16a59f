// dl-version.c at load time: every DT_VERNEED (file, version) of every loaded object must be
// defined in the DT_VERDEF of the loaded object known by that file name.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "analyzer/check/check.h"
#include "analyzer/util/listing.h"
#include "analyzer/check/symbol_index.h"

namespace depscan {
namespace {

bool defines_version(const Binary& provider, const std::string& version) {
  for (const VersionDef& d : provider.version_defs)
    if (d.name == version) return true;
  return false;
}

std::vector<std::string> defined_versions(const Binary& provider) {
  std::vector<std::string> out;
  for (const VersionDef& d : provider.version_defs)
    if (!d.base) out.push_back(d.name);
  return out;
}

Finding missing_version(const Object& requester, size_t requester_index, const Object& provider,
                        const VersionNeed& need) {
  Finding f;
  f.code = "symbol-version-not-found";
  f.severity = need.weak ? Severity::Warning : Severity::Error;
  f.object = requester_index;
  f.path = requester.path;
  std::vector<std::string> users = requester.binary->symbols_needing(need);
  std::vector<std::string> versions = defined_versions(*provider.binary);
  f.message = fmt::format("{}: {}version '{}' not found (required by {}); {} defines {}", provider.path,
                          need.weak ? "weak " : "", need.version, requester.path, need.file,
                          versions.empty() ? "no versions" : join_last(versions));
  if (!users.empty())
    f.message += fmt::format("; {} uses {} for {}", requester.path, need.version, join_limited(users));
  f.fix = fmt::format("install a {} that defines {} (the one {} was built against), or rebuild {} "
                      "against the installed one",
                      need.file, need.version, requester.path, requester.path);
  return f;
}

// A provider without DT_VERDEF: ld.so only notes it, and binds the versioned references to its
// unversioned definitions.
Finding no_version_info(const Object& requester, size_t requester_index, const Object& provider,
                        const VersionNeed& need) {
  return Finding{"symbol-version-not-found", Severity::Warning, requester_index,
                 fmt::format("{}: no version information available (required by {}); it needs {} "
                             "from {}", provider.path, requester.path, need.version, need.file),
                 "", requester.path};
}

// glibc's _dl_check_map_versions finds the object a need names among every loaded object, and
// asserts it exists: a DT_VERNEED file that no DT_NEEDED brings in (removed with patchelf
// --remove-needed) stops the process before it starts, whichever object defines the symbols.
// A library scanned on its own may be loaded by a program that has loaded that file already.
Finding unloaded_version_file(const Object& requester, size_t requester_index, const VersionNeed& need, bool program) {
  return Finding{"symbol-version-not-found", program ? Severity::Error : Severity::Warning, requester_index,
                 fmt::format("Inconsistency detected by ld.so: dl-version.c: _dl_check_map_versions: Assertion "
                             "`needed != NULL' failed! ({} needs {} from {}, which {}: it is not among its DT_NEEDED "
                             "entries)", requester.path, need.version, need.file,
                             program ? "nothing in the process loads"
                                     : "nothing loaded with it loads, unless the program that loads it has loaded that file first"),
                 fmt::format("add {} back to the DT_NEEDED entries of {} (patchelf --add-needed {}), or rebuild it "
                             "so that its version needs name a library it loads", need.file, requester.path, need.file),
                 requester.path};
}

bool needs_by_name(const Binary& binary, std::string_view file) {
  return std::find(binary.needed.begin(), binary.needed.end(), file) != binary.needed.end();
}

}  // namespace

std::vector<Finding> check_symbol_versions(const CheckContext& ctx, const SymbolIndex& symbols) {
  std::vector<Finding> out;
  std::set<std::tuple<size_t, size_t, std::string>> seen;  // requester, provider, version
  std::map<std::pair<size_t, std::string>, size_t> unloaded;  // requester, file -> its finding in `out`
  // The needs of one file checked against one provider give the same answer in every root: a
  // run of an object's needs (one file) is checked once per provider it met.
  std::vector<std::vector<std::pair<size_t, size_t>>> checked(ctx.graph.objects.size());  // per requester: (run, provider)
  for (size_t root = 0; root < ctx.graph.load_order.size(); ++root) {
    if (root < ctx.graph.root_loaders.size() && ctx.graph.root_loaders[root].musl) continue;  // musl checks no versions
    const Binary* start = root < ctx.graph.roots.size() ? ctx.graph.objects[ctx.graph.roots[root]].binary.get() : nullptr;
    bool program = start && start->is_program_only();
    for (size_t o : symbols.members(root)) {
      const Object& requester = ctx.graph.objects[o];
      const std::vector<VersionNeed>& needs = requester.binary->version_needs;
      for (size_t run = 0, end = 0; run < needs.size(); run = end) {
        end = run + 1;
        while (end < needs.size() && needs[end].file == needs[run].file) ++end;
        auto provider_index = symbols.loaded(root, needs[run].file);
        if (!provider_index) {  // when it is NEEDED, library-not-found says so
          if (needs_by_name(*requester.binary, needs[run].file)) continue;
          Finding f = unloaded_version_file(requester, o, needs[run], program);
          auto [it, first] = unloaded.try_emplace({o, needs[run].file}, out.size());
          if (first) out.push_back(std::move(f));
          else if (f.severity > out[it->second].severity) out[it->second] = std::move(f);
          continue;
        }
        auto& done = checked[o];
        if (std::find(done.begin(), done.end(), std::pair(run, *provider_index)) != done.end()) continue;
        done.emplace_back(run, *provider_index);
        const Object& provider = ctx.graph.objects[*provider_index];
        const Binary& defs = *provider.binary;
        bool no_verdef = defs.version_defs.empty();
        for (size_t i = run; i < end; ++i) {
          const VersionNeed& need = needs[i];
          if (!no_verdef && defines_version(defs, need.version)) continue;
          if (!seen.emplace(o, *provider_index, no_verdef ? std::string() : need.version).second) continue;
          out.push_back(no_verdef ? no_version_info(requester, o, provider, need)
                                  : missing_version(requester, o, provider, need));
        }
      }
    }
  }
  return out;
}

}  // namespace depscan
