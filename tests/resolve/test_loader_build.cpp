// What a glibc loader was built with (its search path and cache), read from its bytes, against
// what the loader itself prints with --help; and synthetic loaders of other builds.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "analyzer/resolve/loader_build.h"
#include "analyzer/resolve/system_layout.h"
#include "support.h"

namespace depscan::test {
namespace {

// "Shared library search path:" in `LOADER --help`: the cache it names and the system directories.
LoaderBuild printed_by(const std::string& loader) {
  auto r = run_command(shell_quote(loader) + " --help");
  LoaderBuild printed;
  const std::string cache_tag = "(libraries located via ", dir_tag = " (system search path)";
  size_t at = r.output.find("Shared library search path:");
  REQUIRE_MESSAGE(at != std::string::npos, r.output);
  for (size_t end = r.output.find('\n', at); end != std::string::npos; end = r.output.find('\n', at)) {
    std::string line = r.output.substr(at, end - at);
    at = end + 1;
    size_t start = line.find_first_not_of(' ');
    if (start == std::string::npos) break;
    line = line.substr(start);
    if (line.starts_with(cache_tag)) printed.cache_path = line.substr(cache_tag.size(), line.size() - cache_tag.size() - 1);
    else if (line.ends_with(dir_tag)) printed.system_dirs.push_back(line.substr(0, line.size() - dir_tag.size()));
  }
  return printed;
}

void check_against_help(const std::string& loader) {
  INFO(loader);
  auto fs = make_real_fs();
  auto read = read_loader_build(*fs, loader);
  REQUIRE(read.has_value());
  LoaderBuild printed = printed_by(loader);
  CHECK(read->system_dirs == printed.system_dirs);
  CHECK(read->cache_path == printed.cache_path);
}

std::string bytes_of(std::initializer_list<std::string_view> strings) {
  std::string out("\x7f" "ELF\x02\x01\0", 7);  // a 64-bit little-endian ELF file's first bytes
  for (std::string_view s : strings) out.append(s).push_back('\0');
  return out;
}

}  // namespace

TEST_CASE("the system loader's search path and cache, as it prints them") {
  check_against_help("/lib64/ld-linux-x86-64.so.2");
  auto fs = make_real_fs();
  CHECK(read_loader_build(*fs, "/lib64/ld-linux-x86-64.so.2")->system_dirs == detect_layout(*fs, ProcessAbi{}).system_dirs);
}

TEST_CASE("loaders built with other strings, as they print them (fixtures/ldso own_loader*)") {
  check_against_help(fixtures_dir() + "/ldso/own_loader/loader/ld-linux-x86-64.so.2");
  check_against_help(fixtures_dir() + "/ldso/own_loader_root/root/opt/glibc-2.36-build/lib/ld-linux-x86-64.so.2");
}

TEST_CASE("a glibc installed under a prefix: one directory, its own") {
  std::string prefix = bytes_of({"x", "/opt/glibc-2.35/lib/", "", "/opt/glibc-2.35/etc/ld.so.cache", "--list"});
  auto build = loader_build_in(prefix, {"/opt/glibc-2.35/lib"});
  REQUIRE(build.has_value());
  CHECK(build->system_dirs == std::vector<std::string>{"/opt/glibc-2.35/lib"});
  CHECK(build->cache_path == "/opt/glibc-2.35/etc/ld.so.cache");
  // A lone directory string that is not the loader's own could be any string: not taken.
  CHECK_FALSE(loader_build_in(prefix, {"/elsewhere"}).has_value());
}

TEST_CASE("a copied loader: directories known by their table of lengths") {
  std::string without = bytes_of({"/usr/lib64/", "/lib64/", "", "/etc/ld.so.cache"});
  CHECK_FALSE(loader_build_in(without, {"/app/bundle"}).has_value());
  std::string table("\x0b\0\0\0\0\0\0\0\x07\0\0\0\0\0\0\0", 16);  // 11 and 7, size_t, little-endian
  auto build = loader_build_in(without + table, {"/app/bundle"});
  REQUIRE(build.has_value());
  CHECK(build->system_dirs == std::vector<std::string>{"/usr/lib64", "/lib64"});
  CHECK(build->cache_path == "/etc/ld.so.cache");
}

TEST_CASE("not a glibc loader: musl's path list, or no directories at all") {
  CHECK_FALSE(loader_build_in(bytes_of({"/lib:/usr/local/lib:/usr/lib", "/etc/ld-musl-x86_64.path"}), {"/lib"}).has_value());
  CHECK_FALSE(loader_build_in("", {"/lib"}).has_value());
  CHECK_FALSE(loader_build_in(bytes_of({"/lib/ with space/"}), {"/lib/ with space"}).has_value());
}

TEST_CASE("a hostile loader: runs without end and one endless run") {
  std::string many = bytes_of({});
  for (int i = 0; i < 500000; ++i) many += std::string("/a/\0/b/\0x\0", 10);
  CHECK_FALSE(loader_build_in(many, {"/own"}).has_value());  // 16 runs looked at, then given up
  std::string endless = bytes_of({});
  for (int i = 0; i < 500000; ++i) endless += std::string("/own/\0", 6);
  auto build = loader_build_in(endless + "x", {"/own"});
  REQUIRE(build.has_value());
  CHECK(build->system_dirs.size() == 64);  // the run's first 64 directories
}

}  // namespace depscan::test
