// What a Python package has loaded into the process before it loads one of its modules (matrix
// loaded_first): CuPy's cuda-pathfinder loads the NVIDIA wheels' libraries; torchvision's modules
// come after import torch. The module's NEEDED entries bind to those copies by soname.
#pragma once

#include <string>
#include <vector>

#include "analyzer/input/file_owners.h"
#include "analyzer/input/fs.h"
#include "analyzer/resolve/resolve.h"
#include "matrix/matrix.h"

namespace depscan {

// One list per root, in the roots' order; empty for a root no row describes. For each library of
// a row, the first of its paths that is a file in a site-packages on the root's sys.path, taken in
// its order (sys_path_of); a row that names a distribution looks only in the
// site-packages of the first of that name, and only if its release is recent enough. None: skipped
// (the package then asks the loader for the soname, as the module's own NEEDED entry does).
std::vector<std::vector<LoadedBeforeRoot>> libraries_loaded_first(const std::vector<std::string>& roots,
                                                                   const std::vector<Distribution>& distributions,
                                                                   const Matrix& matrix, const FileOwners& owners,
                                                                   const FileSystem& fs);

// A copy of a library the package did not load first, and why: "(cutensor-cu13 2.8.1): taken only
// from cutensor-cu12 2.x, at least 2.0.0".
struct PassedOver {
  std::string path;  // SP/cutensor/lib/libcutensor.so.2
  std::string why;
};
struct FileLoadedFirst {
  std::vector<LoadedBeforeRoot> loaded;
  std::vector<PassedOver> passed_over;
  std::string site_packages;        // the one that holds the file, or ""
  bool outside_python_env = false;  // that directory is not on python_env's interpreter's sys.path
};

// What the package loads first for one file outside a scan (depscan why), and the copies it passes
// over. The distributions are read from the site-packages directory that holds the file and the
// others of its environment's interpreter, or of `python_env`'s when given (a venv that imports
// its base environment's modules); none: both empty.
FileLoadedFirst libraries_loaded_first_for_file(const std::string& path, const Matrix& matrix, const FileSystem& fs,
                                                const std::string& python_env = "");

}  // namespace depscan
