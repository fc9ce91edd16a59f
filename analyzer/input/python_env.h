// Python environments: a venv or conda prefix (lib/pythonX.Y/site-packages) or a site-packages
// directory, read through the FileSystem so a container root works the same way.
#pragma once

#include <string>
#include <vector>

#include "analyzer/input/distribution.h"
#include "analyzer/input/fs.h"
#include "analyzer/model.h"

namespace depscan {

// site-packages (and dist-packages) directories under a prefix, e.g. lib/python3.12/site-packages.
std::vector<std::string> find_site_packages(const FileSystem& fs, const std::string& prefix);

// The environment a site-packages directory belongs to, as the directories one interpreter's
// sys.path holds: the prefix before lib/pythonX.Y/site-packages (lib64, dist-packages, Windows'
// Lib/site-packages), /usr for /usr/local (Debian's python3 reads both), else the directory itself.
std::string_view python_environment_of(std::string_view site_packages);

// Whether a directory holds installed distributions (any *.dist-info with METADATA).
bool looks_like_site_packages(const FileSystem& fs, const std::string& dir);

// Every *.dist-info of a site-packages directory: name, version, requirements, RECORD files.
std::vector<Distribution> read_distributions(const FileSystem& fs, const std::string& site_packages,
                                             std::vector<Finding>& findings);

}  // namespace depscan
