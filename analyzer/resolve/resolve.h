// Rebuilds the graph of objects glibc's ld.so would load for each root, and records why each
// file was chosen (see ../shared/reference/ldso-rules.md for the rules).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/input/fs.h"
#include "analyzer/model.h"
#include "analyzer/read/read.h"
#include "analyzer/resolve/loader_build.h"

namespace depscan {

// What the process would run with. Defaults are filled from the caller's environment and this
// CPU by default_environment(); options override single fields.
struct LoaderEnvironment {
  std::string ld_library_path;                // as written: glibc splits on ':' and ';', musl on ':'
  std::vector<std::string> preload;           // LD_PRELOAD, split on ' ' and ':'
  bool use_etc_preload = true;                // read /etc/ld.so.preload of the analysed root
  bool secure = false;                        // setuid: LD_LIBRARY_PATH ignored, $ORIGIN restricted
  std::string platform = "x86_64";            // $PLATFORM
  std::string lib;                            // $LIB; empty = decide from the root's layout
  std::vector<std::string> hwcaps;            // glibc-hwcaps levels searched, best first
  std::vector<std::string> legacy_hwcaps;     // legacy hwcap subdirectories searched
  std::string cwd = "/";                      // relative NEEDED paths resolve against this
  uint32_t isa_levels = 0;                    // x86-64 ISA levels of the CPU (model.h kIsa*)
  uint64_t hwcap_bits = 0;                    // dl_hwcap & mask, for legacy ld.so.cache entries
  std::vector<std::string> pe_search_path;    // PE: PATH-like directories after the system dirs
};

LoaderEnvironment default_environment();

struct HwcapInfo;
// The CPU facts in `hw` (hwcaps.h): the glibc-hwcaps and legacy subdirectories, $PLATFORM, ISA levels.
void set_hwcaps(LoaderEnvironment& env, const HwcapInfo& hw);

struct WindowsDllLists {
  // Lower-case names of the DLLs every Windows installs (matrix/data/windows-dlls.json): missing
  // from a tree without a Windows directory, they are marked system_provided, not plain missing.
  std::vector<std::string> system;
  // Lower-case names of the DLLs the NVIDIA display driver installs in System32 (nvcuda.dll).
  std::vector<std::string> driver;
};

struct ResolveOptions {
  LoaderEnvironment env;
  // Called once, when the first DLL is not found: ELF-only scans never read the lists.
  std::function<WindowsDllLists()> windows_dlls;
};

// A library the process loaded by its path before the root: a Python package's own code loads
// some libraries before it imports the module that needs them (matrix loaded_first).
struct LoadedBeforeRoot {
  std::string path;
  std::string by;       // who loads it, for the edge's label
  bool global = false;  // RTLD_GLOBAL: a preload edge (global scope); else a dlopen edge (its own scope)
};

// The resolver is incremental: roots are added one by one, and dlopen edges (issue 4) are added
// after the NEEDED graph is complete, each resolving with dlopen's rules from a given object.
class Resolver {
 public:
  Resolver(BinaryCache& cache, ResolveOptions options);
  ~Resolver();
  Resolver(const Resolver&) = delete;
  Resolver& operator=(const Resolver&) = delete;

  // Loads a root (executable or library) with its preloads and NEEDED closure, breadth-first.
  // `loaded_first` are loaded with their NEEDED closures after the preloads and before the root's
  // NEEDED entries, which bind to them by soname. Returns the root's index in graph().roots.
  size_t add_root(const std::string& logical_path, std::span<const LoadedBeforeRoot> loaded_first = {});
  // Makes room for the edges of about `count` roots at once. The edge list would otherwise copy
  // itself to a new place several times as it grows; room it never uses is never touched.
  void reserve_roots(size_t count);

  // Models dlopen(name) called by object `from` within root `root_index`: the caller's RPATH
  // chain and RUNPATH apply; the new object's NEEDED closure is loaded too. Returns the edge.
  size_t add_dlopen(size_t root_index, size_t from, const std::string& name, bool inferred,
                    const std::string& source);

  // Step-by-step account of how `name` requested by `from` would be searched now: every
  // candidate with why it was taken or skipped; the last entry states the result.
  std::vector<Attempt> explain(size_t root_index, size_t from, const std::string& name) const;

  const Graph& graph() const;
  // The loader the root's program runs under when it is its own (loader_build.h), else null.
  const OwnLoader* own_loader(size_t root_index) const;
  Graph take_graph();
  // Problems met while loading (unreadable files, parse errors, bad ld.so.cache).
  const std::vector<Finding>& diagnostics() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace depscan
