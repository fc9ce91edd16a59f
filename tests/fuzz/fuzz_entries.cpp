#include "fuzz/fuzz_entries.h"

#include <unistd.h>

#include <cstdio>

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "analyzer/check/cuda_stack.h"
#include "analyzer/input/image.h"
#include "analyzer/input/safe_tree.h"
#include "analyzer/input/wheel.h"
#include "analyzer/read/elf_reader.h"
#include "analyzer/read/fatbin_reader.h"
#include "analyzer/read/pe_reader.h"
#include "analyzer/read/rodata_strings.h"
#include "analyzer/resolve/glibc_release.h"
#include "analyzer/resolve/ld_so_cache.h"
#include "analyzer/resolve/ld_so_conf.h"
#include "analyzer/resolve/loader_build.h"
#include "analyzer/scan/scan.h"
#include "loader/probe_events.h"
#include "matrix/matrix.h"
#include "matrix/policy.h"

namespace depscan::fuzz {
namespace {

void elf_reader(const uint8_t* data, size_t size) {
  (void)read_elf(ByteView(data, size), "fuzz.so");
}

void fatbin_reader(const uint8_t* data, size_t size) { (void)read_fatbin(ByteView(data, size)); }

// ld.so.cache: parse, then look every key up (binary search and hwcaps choice included).
void ld_so_cache(const uint8_t* data, size_t size) {
  auto cache = LdSoCache::parse(ByteView(data, size));
  if (!cache) return;
  CacheQuery query = cache_query_for(64, 62);
  query.glibc_hwcaps = {"x86-64-v3", "x86-64-v2"};
  query.isa_levels = 7;
  for (const LdCacheEntry& e : cache->entries())
    if (e.key) (void)cache->lookup(*e.key, query);
  (void)cache->lookup("libc.so.6", query);
}

// Writes the input to a fresh file named `name` inside a private directory (removed with it).
struct InputFile {
  std::unique_ptr<TempDirectory> dir;
  std::string path;
};

InputFile write_input(const uint8_t* data, size_t size, const std::string& name) {
  InputFile input;
  auto dir = TempDirectory::create("fuzz");
  if (!dir) return input;
  input.dir = std::move(*dir);
  input.path = input.dir->path() + "/" + name;
  std::FILE* out = std::fopen(input.path.c_str(), "wb");
  if (!out) return input;
  if (size) std::fwrite(data, 1, size, out);
  std::fclose(out);
  return input;
}

// LIEF reads the file by path; exceptions of every kind must stay inside read_pe.
void pe_reader(const uint8_t* data, size_t size) {
  InputFile input = write_input(data, size, "fuzz.dll");
  if (input.dir) (void)read_pe(input.path, "fuzz.dll");
}

void wheel_reader(const uint8_t* data, size_t size) {
  InputFile input = write_input(data, size, "fuzz-1.0-cp312-cp312-manylinux_2_28_x86_64.whl");
  if (!input.dir) return;
  auto prefix = TempDirectory::create("fuzz-prefix");
  if (!prefix) return;
  SafeTree tree((*prefix)->path());
  (void)install_wheel(input.path, "fuzz.whl", tree, InstallLayout{});
}

void image_reader(const uint8_t* data, size_t size) {
  InputFile input = write_input(data, size, "image.tar");
  if (!input.dir) return;
  auto staging_dir = TempDirectory::create("fuzz-staging");
  auto rootfs_dir = TempDirectory::create("fuzz-rootfs");
  if (!staging_dir || !rootfs_dir) return;
  SafeTree staging((*staging_dir)->path());
  SafeTree rootfs((*rootfs_dir)->path());
  if (is_image_archive(input.path)) (void)unpack_image(input.path, "image.tar", staging, rootfs);
}

// The small parsers of text that comes from the analysed files or from the verification child:
// the whole input, and each line of it, through every one.
void text_parsers(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)library_names_in(ByteView(data, size));  // the read-only data scans behind dlopen and LoadLibrary edges
  (void)dll_names_in(ByteView(data, size));
  (void)tsl_cuda_stubs_in(ByteView(data, size));
  (void)hwcap_rules_for(parse_release_banner(text));
  (void)parse_metadata(text);
  (void)parse_wheel_tags(text);
  (void)parse_record_paths(text);
  (void)parse_nvidia_version_text(text);
  (void)cu_major_in(text, "-", "");
  (void)cu_major_in(text, "/", "/lib");
  (void)cuda_major_of_distribution(text);
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    (void)parse_requirement(line);
    (void)parse_wheel_file_name(line);
    (void)python_dir_for_tag(line);
    (void)version_from_file_name(line);
    (void)Version::parse(line);
    (void)decode_event(line);
    (void)step_status_from(line);
    if (size_t bar = line.find('|'); bar != std::string_view::npos) (void)glob_match(line.substr(0, bar), line.substr(bar + 1));
    start = end + 1;
  }
}

// Files of an analysed root the resolver reads as text or for a banner: the input becomes
// /etc/ld.so.conf (with an included directory holding it again), the loader (its banner, its
// search path and cache) and libc.so.6.
void root_files(const uint8_t* data, size_t size) {
  auto dir = TempDirectory::create("fuzz-root");
  if (!dir) return;
  namespace stdfs = std::filesystem;
  const stdfs::path root = (*dir)->path();
  std::error_code ignored;
  for (const char* sub : {"etc/ld.so.conf.d", "lib64", "lib/x86_64-linux-gnu"}) stdfs::create_directories(root / sub, ignored);
  for (const char* file : {"etc/ld.so.conf", "etc/ld.so.conf.d/x.conf", "lib64/ld-linux-x86-64.so.2",
                           "lib/x86_64-linux-gnu/libc.so.6"}) {
    std::FILE* out = std::fopen((root / file).c_str(), "wb");
    if (!out) return;
    if (size) std::fwrite(data, 1, size, out);
    std::fclose(out);
  }
  auto fs = make_rooted_fs(root.string());
  (void)read_ld_so_conf(*fs);
  (void)glibc_release_of(*fs, "/lib64/ld-linux-x86-64.so.2", {"/lib/x86_64-linux-gnu"});
  (void)read_loader_build(*fs, "/lib64/ld-linux-x86-64.so.2");
}

void matrix_loader(const uint8_t* data, size_t size) {
  Matrix matrix;
  (void)matrix.load_document(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json");
}

void policy_loader(const uint8_t* data, size_t size) {
  (void)parse_policies(std::string_view(reinterpret_cast<const char*>(data), size));
}

// The whole static pipeline on one input file, with no environment influence.
void pipeline(const uint8_t* data, size_t size) {
  InputFile input = write_input(data, size, "input");
  if (!input.dir) return;
  const std::string path = input.path;
  ScanOptions options;
  options.inputs = {path};
  options.ld_library_path = "";
  options.preload = "";
  options.no_etc_preload = true;
  (void)run_scan(options);
}

}  // namespace

const std::vector<Target>& targets() {
  static const std::vector<Target> all = {
      {"elf", elf_reader},
      {"pipeline", pipeline},
      {"fatbin", fatbin_reader},
      {"ld_so_cache", ld_so_cache},
      {"pe", pe_reader},
      {"wheel", wheel_reader},
      {"image", image_reader},
      {"matrix", matrix_loader},
      {"policy", policy_loader},
      {"text", text_parsers},
      {"root_files", root_files},
  };
  return all;
}

}  // namespace depscan::fuzz
