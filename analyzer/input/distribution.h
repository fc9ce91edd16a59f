// One installed Python distribution (from a wheel depscan installed into its temporary prefix,
// or a *.dist-info directory found in site-packages), as far as depscan needs it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace depscan {

struct Requirement {
  std::string name;        // normalised (PEP 503): "nvidia-cudnn-cu12"
  std::string specifier;   // "==9.1.0.70", ">=12.1,<13", or empty
  std::string marker;      // text after ';', empty if none
  std::string raw;         // the Requires-Dist line as written
};

struct Distribution {
  std::string name;                    // Name: as written in METADATA
  std::string version;                 // Version:
  std::string dist_info;               // logical path of its *.dist-info directory
  std::string site_packages;           // logical path of the site-packages it is installed in
  std::string system_site_prefix;      // a venv's base prefix, when its interpreter reads that too (pyvenv.cfg)
  std::string venv_prefix;             // in a base environment read for a venv (above): the venv, whose
                                       // interpreter imports it with the venv's site-packages first
  std::string wheel_file;              // the wheel it came from (file name), empty if installed
  std::vector<std::string> tags;       // WHEEL "Tag:" lines, e.g. cp312-cp312-manylinux_2_17_x86_64
  std::vector<Requirement> requires_dist;
  std::vector<std::string> files;      // logical paths from RECORD, normalised
};

// PEP 503 normalisation: lower case, runs of '-', '_' and '.' become one '-'.
std::string normalize_dist_name(std::string_view name);

// One of the distribution's files relative to its site-packages ("torch/version.py"); the path
// itself when it lies elsewhere (a script in bin/).
inline std::string relative_to_site_packages(const Distribution& d, const std::string& file) {
  std::string prefix = d.site_packages + "/";
  return file.starts_with(prefix) ? file.substr(prefix.size()) : file;
}

}  // namespace depscan
