// musl's dynamic loader (ldso/dynlink.c), which Alpine and other musl systems run every program
// under: /lib/ld-musl-<arch>.so.1, musl's libc.so itself. Its search differs from glibc's: no
// ld.so.cache, no hwcaps subdirectories, LD_LIBRARY_PATH before the RPATH/RUNPATH of the requesting
// object and of every object above it on the chain that loaded it (RUNPATH replaces RPATH and is
// inherited like it), then the directories of <prefix>/etc/ld-musl-<arch>.path, else
// /lib:/usr/local/lib:/usr/lib. The first file a directory holds is taken: another class or machine
// stops the load. Sonames are never matched; names of the C library's parts are the loader itself.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/input/fs.h"
#include "analyzer/model.h"
#include "analyzer/resolve/elf_header_check.h"

namespace depscan {

struct MuslSearchPath {
  std::vector<std::string> dirs;  // in search order
  std::string path_file;          // the file they were read from; "" for musl's built-in default
};

// "/lib/ld-musl-x86_64.so.1" -> "x86_64"; nullopt for a path not named as musl names its loader.
std::optional<std::string> musl_loader_arch(std::string_view loader_path);

// The search path the loader at `loader_path` (its PT_INTERP spelling) reads inside fs: the path
// file up to its first NUL byte; none when it cannot be read (a directory); the default when absent.
MuslSearchPath musl_search_path(const FileSystem& fs, const std::string& loader_path);

// A list as path_open walks it: components split on ':' and newlines, empty ones skipped.
std::vector<std::string> split_musl_path(std::string_view list);

// An RPATH or RUNPATH as musl's fixup_rpath expands it: $ORIGIN and ${ORIGIN} become `origin`;
// nullopt when it holds any other '$' (musl then ignores the object's list).
std::optional<std::string> expand_musl_origin(std::string list, const std::string& origin);

// lib{c,pthread,rt,m,dl,util,xnet}.<anything>: musl gives the loader itself for these names.
bool is_musl_reserved_name(std::string_view name);

// A file musl's load_library takes for another C library (it defines __libc_start_main and stdin,
// as glibc's libc.so.6 does): musl loads itself instead. False when the symbols were not read.
bool is_second_c_library(const Binary& b);

// The names an object linked against musl's C library needs it by: "libc.musl-<arch>.so.1" (Alpine's
// soname) or "libc.so" (musl-gcc's); glibc's is libc.so.6.
bool is_musl_libc_name(std::string_view needed);

// The first NEEDED of `b` that names musl's C library, or "".
std::string musl_libc_needed(const Binary& b);

// /lib/ld-musl-<arch>.so.1 for this class and machine; nullopt for a machine depscan does not know.
std::optional<std::string> musl_loader_path(const ProcessAbi& abi);

// musl_loader_path() when the root has it (a regular file).
std::optional<std::string> musl_loader_of_root(const FileSystem& fs, const ProcessAbi& abi);

// The musl loader of a root that has one and no glibc loader for this class and machine: the
// loader its libraries are loaded by. nullopt otherwise.
std::optional<std::string> system_musl_loader(const FileSystem& fs, const ProcessAbi& abi);

}  // namespace depscan
