// run_scan(): the whole static pipeline, one stage per line. The CLI, the tests and the fuzzers
// all call this same function.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/check/check.h"
#include "analyzer/check/cuda_stack.h"
#include "analyzer/input/image.h"
#include "analyzer/model.h"
#include "analyzer/resolve/resolve.h"

namespace depscan {

struct ScanOptions {
  std::vector<std::string> inputs;            // files, directories, wheels, images
  std::optional<std::string> root;            // --root DIR: analyse a root file system as "/"
  std::optional<std::string> python_env;      // --python-env DIR: a venv or conda prefix
  ImageChoice image;                          // --image NAME, --platform os/arch[/variant]: the image of an archive
  std::optional<std::string> ld_library_path; // --ld-library-path (overrides the environment)
  bool glibc_tunables_given = false;          // --glibc-tunables, not this environment's GLIBC_TUNABLES
  bool bind_now_given = false;                // --bind-now, not this environment's LD_BIND_NOW
  std::optional<std::string> preload;         // --preload (overrides LD_PRELOAD)
  bool no_etc_preload = false;                // ignore /etc/ld.so.preload
  Target target;
  std::optional<std::string> matrix_path;     // --matrix FILE
  bool dlopen_edges = true;                   // add known and inferred dlopen edges
  bool symbols = true;                        // read dynamic symbols and run the symbol-binding checks
  bool gpu_code = false;                      // list embedded GPU code even without --gpu
  bool cuda_audit = false;                    // no file given: audit the CUDA stack the system would load
  unsigned read_threads = 0;                  // --jobs: threads reading the inputs; 0 decides from the page cache
};

struct ScanReport {
  ScanResult result;
  std::vector<std::string> unreadable_inputs;  // inputs that could not be read at all (exit 2)
  std::optional<CudaStack> cuda_stack;          // cuda_audit: the stack found, for the summary
  std::optional<size_t> cuda_audit_root;        // cuda_audit: graph.roots index of the program standing for the
                                                //   application; none when the system has no such program
  std::shared_ptr<const void> scan_work;        // what the scan read and built, freed with the report
};

ScanReport run_scan(const ScanOptions& options);

// The loader environment the options describe (environment defaults, then overrides).
LoaderEnvironment environment_for(const ScanOptions& options);
// The environment above and the Windows system DLL names (matrix/data/windows-dlls.json).
ResolveOptions resolve_options_for(const ScanOptions& options);
// A container's processes start with the image's ENV and WORKDIR, not this shell's; the options
// (--ld-library-path, --preload) still decide.
void use_image_environment(LoaderEnvironment& env, const ImageEnvironment& image, const ScanOptions& options);

}  // namespace depscan
