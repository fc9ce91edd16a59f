// Python environments: a venv or conda prefix (lib/pythonX.Y/site-packages) or a site-packages
// directory, read through the FileSystem so a container root works the same way.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analyzer/input/distribution.h"
#include "analyzer/input/fs.h"
#include "analyzer/model.h"

namespace depscan {

// The site-packages directories an interpreter installed under `prefix` reads, in sys.path's order
// (lib64 before lib): PREFIX/lib*/python*/site-packages or dist-packages, of every pythonX.Y there (or
// PREFIX itself, or Windows' Lib/site-packages). For /usr (Debian's and Fedora's python3) also
// /usr/local's of the same name as its own, first (dist-packages on Debian, site-packages on Fedora);
// a Python built into /usr/local, as in the python:3.X images, has its own site-packages there. For a
// venv whose pyvenv.cfg includes the system site-packages, then its base prefix's directories of
// the same Python version.
std::vector<std::string> interpreter_site_packages(const FileSystem& fs, const std::string& prefix);

// Why `prefix`, which has no interpreter_site_packages, is no Python environment: one line.
const char* why_not_python_environment(const FileSystem& fs, const std::string& prefix);

// For one of an interpreter's directories (`dirs`, from interpreter_site_packages): the venv whose
// interpreter imports the modules there when the directory is its base environment's, else "".
std::string importing_venv(const std::vector<std::string>& dirs, std::string_view dir);

// The environment a site-packages directory belongs to, as the directories one interpreter's
// sys.path holds: the prefix before lib/pythonX.Y/site-packages (lib64, dist-packages, Windows'
// Lib/site-packages), /usr for /usr/local (Debian's python3 reads both), else the directory itself.
std::string_view python_environment_of(std::string_view site_packages);

// Sorts one environment's site-packages directories as its interpreter's sys.path holds them:
// /usr/local's before /usr's, lib64's before lib's, Debian's python3/ before python3.X/.
void sort_as_sys_path(std::vector<std::string_view>& site_packages);

// Whether one interpreter's sys.path holds both site-packages directories: the same environment, and
// the same pythonX.Y (or Debian's version-less python3 and a python3.X): /usr/lib/python3.11 and
// /usr/local/lib/python3.12 are two interpreters', and so are python3 and python2.7. /usr's
// python3 reads /usr/local's directories of its own name only: /usr/local's site-packages beside
// Debian's dist-packages are a Python built into /usr/local.
bool on_one_sys_path(std::string_view a, std::string_view b);

// The site-packages directories on the module's sys.path that hold a distribution, and the module's
// own, in sys.path's order: its environment's (on_one_sys_path), then those of a venv's base
// environment when the venv includes them (Distribution::system_site_prefix); for a module of the
// base imported by such a venv (Distribution::venv_prefix), the venv's first.
std::vector<std::string_view> sys_path_of(const Distribution& module, const std::vector<Distribution>& distributions);

// The distribution of that name importlib.metadata finds first on the module's sys.path, or null.
const Distribution* first_on_sys_path(const std::vector<Distribution>& distributions, std::string_view normalized_name,
                                      const Distribution& module);

// Whether a directory holds installed distributions (any *.dist-info with METADATA).
bool looks_like_site_packages(const FileSystem& fs, const std::string& dir);

// Every *.dist-info of a site-packages directory: name, version, requirements, RECORD files.
std::vector<Distribution> read_distributions(const FileSystem& fs, const std::string& site_packages,
                                             std::vector<Finding>& findings);

}  // namespace depscan
