// The Windows DLL search order, kept simple but real: the application's directory, the system
// directories of the analysed tree (Windows/System32, Windows), then PATH-like directories.
// Names match ignoring case; API-set names (api-ms-win-*, ext-ms-*) are the OS's own.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyzer/input/fs.h"
#include "analyzer/model.h"
#include "analyzer/read/read.h"
#include "analyzer/resolve/search.h"

namespace depscan {

struct PeSearchResult {
  std::optional<std::string> path;
  std::string detail;              // "application directory", "system directory", ...
  std::vector<Attempt> attempts;
  bool system_provided = false;    // an API set: Windows maps it, there is no file to find
};

// The system directories searched inside the analysed tree, in order.
const std::vector<std::string>& windows_system_directories();

// The name a loaded DLL is known by: lower-case base name.
std::string pe_name_key(const std::string& name);

bool is_api_set_name(const std::string& name);

PeSearchResult search_pe_dll(BinaryCache& cache, DirCache& dirs, const std::vector<std::string>& search_dirs,
                             const std::string& name, uint16_t machine);

}  // namespace depscan
