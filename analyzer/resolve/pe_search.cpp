#include "analyzer/resolve/pe_search.h"

#include "analyzer/read/read.h"
#include "analyzer/util/strings.h"

namespace depscan {

const std::vector<std::string>& windows_system_directories() {
  static const std::vector<std::string> dirs = {"/Windows/System32", "/Windows/system32", "/Windows",
                                                "/windows/system32", "/windows"};
  return dirs;
}

std::string pe_name_key(const std::string& name) {
  return ascii_lower(basename_of(name));
}

bool is_api_set_name(const std::string& name) {
  std::string key = pe_name_key(name);
  return key.rfind("api-ms-win-", 0) == 0 || key.rfind("ext-ms-", 0) == 0;
}

PeSearchResult search_pe_dll(BinaryCache& cache, DirCache& dirs, const std::vector<std::string>& search_dirs,
                             const std::string& name, uint16_t machine) {
  PeSearchResult out;
  if (is_api_set_name(name)) {
    out.detail = "API set, resolved by Windows itself";
    out.attempts.push_back({name, "API set: not a file, mapped by the Windows loader"});
    out.system_provided = true;
    return out;
  }
  for (size_t i = 0; i < search_dirs.size(); ++i) {
    const std::string& dir = search_dirs[i];
    auto actual = dirs.find_ignoring_case(dir, basename_of(name));
    if (!actual) {
      if (dirs.is_directory(dir)) out.attempts.push_back({join_path(dir, name), "not found"});
      continue;
    }
    std::string path = join_path(dir, *actual);
    auto bin = cache.get(path);
    if (bin && (*bin)->format == Format::Pe && (*bin)->machine != machine) {
      out.attempts.push_back({path, "skipped: other machine"});
      continue;
    }
    out.attempts.push_back({path, "taken"});
    out.path = path;
    out.detail = i == 0 ? "application directory" : i < 6 ? "system directory" : "PATH";
    return out;
  }
  out.detail = "not found in the DLL search order";
  return out;
}

}  // namespace depscan
