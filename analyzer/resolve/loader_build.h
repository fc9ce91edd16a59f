// What a glibc ld.so was built with: its own search path (SYSTEM_DIRS, elf/dl-load.c's
// system_dirs) and the ld.so.cache it reads (LD_SO_CACHE). A program whose PT_INTERP is another
// glibc's loader (patchelf --set-interpreter /opt/glibc-2.35/lib/ld-linux-x86-64.so.2, the usual
// way to run new builds on an old system) searches that loader's directories and cache, not the
// system's.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/input/fs.h"
#include "analyzer/model.h"
#include "analyzer/resolve/system_layout.h"

namespace depscan {

struct LoaderBuild {
  std::vector<std::string> system_dirs;  // in search order, normalized (no trailing '/')
  std::string cache_path;                // "" when the loader names none
};

// A program's own loader and what it was built with.
struct OwnLoader {
  std::string path;
  LoaderBuild build;
  bool musl = false;          // musl's loader (musl_loader.h): its search rules, not glibc's
  std::string musl_path_file; // musl: the file build.system_dirs came from ("" for musl's default)
};

// Reads them from the loader's bytes: system_dirs is one char array of absolute directories, each
// ending in '/' and NUL-terminated, back to back. The first run of such strings that names the
// loader's own directory, or of two or more whose table of lengths is in the file too, is taken.
// nullopt when none is (not a glibc loader, or one built otherwise).
std::optional<LoaderBuild> loader_build_in(std::string_view bytes, const std::vector<std::string>& own_dirs);

// The loader a program runs under when that is another file than the system's loader for its
// class and machine: its absolute PT_INTERP, if a regular file (program-interpreter reports the
// others). nullopt for a library, a PE file, and a program of the system's loader.
std::optional<std::string> own_loader_path(const FileSystem& fs, const Binary& binary);

// loader_build_in() over the loader at `interpreter` in fs; its own directory is taken both as
// written and with symlinks resolved.
std::optional<LoaderBuild> read_loader_build(const FileSystem& fs, const std::string& interpreter);

// The system directories and $LIB a process of `abi` gets from the system's loader: the layout's
// guess for depscan's own ABI (x86-64), and for another one (i386 beside it) what its loader was
// built with, read from the file: Debian's libc6-i386 searches /lib32, which no guess finds.
SystemLayout layout_for(const FileSystem& fs, const ProcessAbi& abi);

}  // namespace depscan
