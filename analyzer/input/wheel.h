// Wheels (PEP 427) installed the way pip would lay them out, into a private prefix: the wheel
// root goes to site-packages, "<name>-<version>.data/<scheme>/" to its install scheme. Only ELF
// members and the dist-info metadata are written; everything else is read past.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyzer/input/archive.h"
#include "analyzer/input/distribution.h"
#include "analyzer/model.h"

namespace depscan {

struct WheelFileName {
  std::string distribution, version, build, python, abi, platform;  // platform may be "a.b" (compressed set)
};
std::optional<WheelFileName> parse_wheel_file_name(std::string_view file_name);

// Where a wheel installs, relative to the prefix: "lib/python3.12/site-packages" etc.
struct InstallLayout {
  std::string site_packages = "lib/python3/site-packages";
  std::string python = "python3";    // the pythonX.Y directory name (headers)
};
// The python directory name a wheel's python tag implies ("cp312" -> "python3.12"), if any.
std::optional<std::string> python_dir_for_tag(std::string_view python_tag);

// Where a wheel member is installed, relative to the prefix; nullopt for members pip would not
// install (e.g. an unknown .data scheme). `dist_name` is the distribution part of the file name.
std::optional<std::string> install_location(const std::string& member, const std::string& data_dir,
                                            const std::string& dist_name, const InstallLayout& layout);

// METADATA / WHEEL / RECORD parsing (RFC 822-like headers; RECORD is CSV).
struct Metadata {
  std::string name, version;
  std::vector<Requirement> requires_dist;
};
Metadata parse_metadata(std::string_view text);
std::vector<std::string> parse_wheel_tags(std::string_view wheel_text);
std::vector<std::string> parse_record_paths(std::string_view record_text);
// RECORD as an install writes it (pip does the same): the paths under <name>.data/<scheme>/
// become where the files went, relative to site-packages (platlib/x -> x, scripts/x -> ../../../bin/x).
std::string installed_record(std::string_view record_text, const std::string& dist_name, const InstallLayout& layout);
Requirement parse_requirement(std::string_view line);

struct WheelInstall {
  std::vector<std::string> binary_files;  // prefix-relative paths of the ELF and PE members written
  std::vector<Finding> findings;
  bool readable = false;                // false: the archive could not be opened at all
};

// Installs the ELF members and dist-info files of one wheel under `prefix` (a SafeTree).
WheelInstall install_wheel(const std::string& host_path, const std::string& display, SafeTree& prefix,
                           const InstallLayout& layout, const ArchiveLimits& limits = {});

}  // namespace depscan
