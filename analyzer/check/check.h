// Every check is an independent function of the finished graph: f(context) -> findings.
// The worst severity over all findings decides the exit code (in cli/ only).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyzer/input/distribution.h"
#include "analyzer/input/fs.h"
#include "analyzer/model.h"

namespace depscan {

class Matrix;
class ShippedLibraries;
class SymbolIndex;

// What the user says about the machine the binaries will run on.
struct Target {
  std::optional<std::string> glibc;      // --target-glibc 2.28
  std::optional<std::string> glibcxx;    // --target-glibcxx 3.4.25 (libstdc++ GLIBCXX_ version)
  std::optional<std::string> baseline;   // --target named distribution baseline
  std::vector<std::string> gpus;         // --gpu sm_90 / H100 (several allowed)
  std::optional<std::string> driver;     // --driver 550.54.14
  bool bind_now = false;                 // --bind-now: model LD_BIND_NOW=1
  std::optional<uint64_t> page_size;     // --page-size 65536: the target kernel's page size
  std::string glibc_tunables;            // --glibc-tunables, else this environment's GLIBC_TUNABLES
  std::optional<uint32_t> cpu_isa_levels; // --cpu-level x86-64-v2: kIsa* bits of the target CPU; else this CPU's
};

struct CheckContext {
  const Graph& graph;
  const Matrix& matrix;
  const Target& target;
  const FileSystem& fs;
  const ShippedLibraries* shipped = nullptr;  // what an install's distributions ship: wheels, site-packages, --python-env
  uint32_t cpu_isa_levels = 0;  // kIsa* bits of the CPU the search ran for (--cpu-level or this CPU's); 0: ask the CPU
};

// Every NEEDED that did not resolve (library-not-found) and every unreadable object (parse-error).
std::vector<Finding> check_missing_libraries(const CheckContext& ctx);

// Root programs the kernel cannot start because of their PT_INTERP: missing, not executable, not
// ELF, or another class or machine (program-interpreter); a relative one (program-interpreter-relative).
std::vector<Finding> check_program_interpreters(const CheckContext& ctx);

// Library roots whose class and machine have no loader in the analysed system (loader-missing).
std::vector<Finding> check_library_loaders(const CheckContext& ctx);

// Objects whose RPATH or RUNPATH makes the loader search the process's working directory: an
// empty or a relative entry (search-path-working-directory).
std::vector<Finding> check_working_directory_search(const CheckContext& ctx);

// Libraries loaded with dlopen that need an executable stack, which glibc 2.41 and later refuse
// unless the stack is executable already (executable-stack).
std::vector<Finding> check_executable_stack(const CheckContext& ctx);

// Libraries loaded with dlopen whose initial-exec TLS does not fit the static TLS block's surplus
// (static-tls).
std::vector<Finding> check_static_tls(const CheckContext& ctx);

// x86 objects whose GNU property note asks for an ISA level the CPU lacks (cpu-isa-level).
std::vector<Finding> check_cpu_isa_level(const CheckContext& ctx);

// aarch64 and ppc64 objects whose PT_LOAD segments do not fit the target's page size (--page-size),
// or 64 KiB pages without it (page-size).
std::vector<Finding> check_page_size(const CheckContext& ctx);

// DT_VERNEED versions the loaded provider does not define (symbol-version-not-found).
std::vector<Finding> check_symbol_versions(const CheckContext& ctx, const SymbolIndex& symbols);

// Undefined dynamic symbols no object of the lookup scope defines (undefined-symbol).
std::vector<Finding> check_undefined_symbols(const CheckContext& ctx, const SymbolIndex& symbols);

// Copy-relocated variables whose definition in the library is larger or smaller than the
// program's copy (copy-relocation-size).
std::vector<Finding> check_copy_relocation_sizes(const CheckContext& ctx, const SymbolIndex& symbols);

// References bound to an earlier object than the library they were linked against
// (symbol-interposed).
std::vector<Finding> check_interposition(const CheckContext& ctx, const SymbolIndex& symbols);

// Highest GLIBC_/GLIBCXX_/CXXABI_/GCC_ versions required (version-floor), and every symbol
// too new for --target-glibc / --target-glibcxx / --target (symbol-too-new).
std::vector<Finding> check_target_floors(const CheckContext& ctx);

}  // namespace depscan
