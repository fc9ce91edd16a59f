// DLLs a Windows program may import without shipping them, read from the embedded
// matrix/data/windows-dlls.json: the system DLLs every Windows installs, and the Visual C++
// runtime that a program ships beside itself or installs with the redistributable.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analyzer/util/expected.h"

namespace depscan {

struct WindowsRedistributable {
  std::vector<std::string> names;  // lower case
  std::string package;             // "Microsoft Visual C++ 2015-2022 Redistributable ..."
  std::string source;
};

struct WindowsDlls {
  std::vector<std::string> system;  // lower case
  std::string system_source;
  std::vector<WindowsRedistributable> redistributables;
  WindowsRedistributable driver;    // DLLs the NVIDIA display driver installs (nvcuda.dll)

  // Null unless `name` (any case, any directory) belongs to a redistributable package.
  const WindowsRedistributable* redistributable_of(std::string_view name) const;
  bool is_driver_dll(std::string_view name) const;
};

// Parsed on first use, kept for the rest of the run.
const Expected<WindowsDlls>& load_windows_dlls();

}  // namespace depscan
