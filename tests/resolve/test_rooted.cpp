// --root: a container root file system analysed as "/": its ld.so.cache, ld.so.conf and
// ld.so.preload, absolute symlinks and ".." kept inside it. Where we may chroot (root user),
// the real loader inside the root is the judge.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "analyzer/resolve/glibc_release.h"
#include "analyzer/resolve/hwcaps.h"
#include "resolve_support.h"

namespace depscan::test {
namespace {

namespace fs = std::filesystem;

void write_file(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

void copy_into(const std::string& from, const fs::path& to) {
  fs::create_directories(to.parent_path());
  fs::copy_file(from, to, fs::copy_options::overwrite_existing);
}

// Builds ROOT under tmp: the fixture app, its libraries, libc and the loader, a cache made by
// ldconfig -r, /etc/ld.so.preload; and a decoy library just outside the root.
fs::path build_root(const TempDir& tmp) {
  fs::path root = tmp.path() / "root";
  copy_into(resolve_fixture("rooted/app"), root / "opt/app/bin/app");
  fs::permissions(root / "opt/app/bin/app", fs::perms::owner_all);
  copy_into(resolve_fixture("rooted/libr.so"), root / "opt/real/libr.so.1");
  fs::create_directories(root / "opt/libs");
  fs::create_symlink("/opt/real/libr.so.1", root / "opt/libs/libr.so");
  copy_into(resolve_fixture("rooted/libcached.so"), root / "opt/cached/libcached.so");
  copy_into(resolve_fixture("rooted/libpre.so"), root / "opt/cached/libpre.so");
  copy_into(resolve_fixture("rooted/libcached.so"), tmp.path() / "opt/libs/libr.so");  // decoy outside
  copy_into(fs::canonical("/lib/x86_64-linux-gnu/libc.so.6").string(), root / "lib/x86_64-linux-gnu/libc.so.6");
  copy_into(fs::canonical("/lib64/ld-linux-x86-64.so.2").string(), root / "lib/x86_64-linux-gnu/ld-linux-x86-64.so.2");
  fs::create_directories(root / "lib64");
  fs::create_symlink("/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", root / "lib64/ld-linux-x86-64.so.2");
  write_file(root / "etc/ld.so.conf", "/opt/cached\n");
  write_file(root / "etc/ld.so.preload", "libpre.so\n");
  auto rc = run_command("/sbin/ldconfig -r " + shell_quote(root.string()) + " 2>&1");
  REQUIRE_MESSAGE(rc.exit_code == 0, rc.output);
  return root;
}

// Rewrites the "release version 2.NN" banner of a copied ld.so or libc.so.6 (same length), or
// hides it, as ld.so before 2.33 has none.
void set_banner(const fs::path& file, const std::string& release) {
  std::string bytes;
  {
    std::ifstream in(file, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const std::string banner = "release version ";
  size_t at = bytes.find(banner);
  REQUIRE_MESSAGE(at != std::string::npos, file.string());
  if (release.empty()) bytes[at + 7] = '_';
  else bytes.replace(at + banner.size(), release.size(), release);
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
}

// The root's loader claims `release`; before 2.33 only its libc.so.6 says which it is.
void make_root_glibc(const fs::path& root, const std::string& release) {
  fs::path dir = root / "lib/x86_64-linux-gnu";
  bool loader_banner = release >= "2.33";
  set_banner(dir / "ld-linux-x86-64.so.2", loader_banner ? release : "");
  set_banner(dir / "libc.so.6", release);
}

// libcached.so also in /opt/cached/tls and, when asked, /opt/cached/glibc-hwcaps/x86-64-v2,
// with a cache that glibc 2.36's ldconfig writes for them (named, legacy and plain entries).
void add_hwcaps_copies(const fs::path& root, bool with_v2) {
  copy_into(resolve_fixture("rooted/libcached.so"), root / "opt/cached/tls/libcached.so");
  if (with_v2) copy_into(resolve_fixture("rooted/libcached.so"), root / "opt/cached/glibc-hwcaps/x86-64-v2/libcached.so");
  auto rc = run_command("/sbin/ldconfig -r " + shell_quote(root.string()) + " 2>&1");
  REQUIRE_MESSAGE(rc.exit_code == 0, rc.output);
}

bool has_diagnostic(const Walk& w, const std::string& code) {
  for (const Finding& f : w.resolver->diagnostics())
    if (f.code == code) return true;
  return false;
}

}  // namespace

TEST_CASE("a root's cache, preload file, absolute symlinks and '..' stay inside the root") {
  TempDir tmp("rooted");
  fs::path root = build_root(tmp);
  Walk walk("/opt/app/bin/app", clean_environment(), root.string());
  CHECK(walk.where("libr.so") == "/opt/app/bin/../../../../opt/libs/libr.so");
  const Edge* r = walk.edge("libr.so");
  REQUIRE(r != nullptr);
  REQUIRE(r->to.has_value());
  const Object& libr = walk.graph().objects[*r->to];
  CHECK(libr.realpath == "/opt/real/libr.so.1");
  REQUIRE(libr.binary != nullptr);
  CHECK(libr.binary->soname == std::string("libr.so"));  // not the decoy outside the root
  CHECK(walk.where("libcached.so") == "/opt/cached/libcached.so");
  CHECK(walk.edge("libcached.so")->how == How::LdSoCache);
  CHECK(walk.where("libc.so.6") == "/lib/x86_64-linux-gnu/libc.so.6");
  const Edge* pre = walk.edge("libpre.so");
  REQUIRE(pre != nullptr);
  CHECK(pre->kind == EdgeKind::Preload);
  CHECK(walk.where("libpre.so") == "/opt/cached/libpre.so");
  CHECK_FALSE(has_diagnostic(walk, "no-ld-so-cache"));

  if (::geteuid() != 0) {
    MESSAGE("not root: skipping the comparison with the loader inside the root (chroot)");
    return;
  }
  // The loader inside the root, in its list mode (the app is not a symlink, so $ORIGIN agrees).
  CommandResult chrooted = run_command("chroot " + shell_quote(root.string()) +
                                       " /lib64/ld-linux-x86-64.so.2 --list /opt/app/bin/app 2>&1");
  INFO(chrooted.output);
  for (const char* name : {"libr.so", "libcached.so", "libc.so.6"}) {
    std::string expected = std::string(name) + " => " + walk.where(name) + " (";
    CHECK(chrooted.output.find(expected) != std::string::npos);
  }
  CHECK(chrooted.output.find("/opt/cached/libpre.so") != std::string::npos);
}

TEST_CASE("without ld.so.cache the root's ld.so.conf directories stand in, and it is said") {
  TempDir tmp("rootednocache");
  fs::path root = build_root(tmp);
  fs::remove(root / "etc/ld.so.cache");
  Walk walk("/opt/app/bin/app", clean_environment(), root.string());
  CHECK(walk.where("libcached.so") == "/opt/cached/libcached.so");
  CHECK(walk.edge("libcached.so")->how_detail == "ld.so.conf (no ld.so.cache)");
  CHECK(walk.where("libc.so.6") == "/lib/x86_64-linux-gnu/libc.so.6");
  CHECK(walk.edge("libc.so.6")->how == How::DefaultPath);
  CHECK(has_diagnostic(walk, "no-ld-so-cache"));
}

TEST_CASE("a corrupt ld.so.cache is a warning and the conf directories stand in") {
  TempDir tmp("rootedbadcache");
  fs::path root = build_root(tmp);
  write_file(root / "etc/ld.so.cache", "glibc-ld.so.cache1.1 truncated");
  Walk walk("/opt/app/bin/app", clean_environment(), root.string());
  CHECK(has_diagnostic(walk, "ld-so-cache-error"));
  CHECK(walk.where("libcached.so") == "/opt/cached/libcached.so");
}

// Expectations from glibc's elf/dl-hwcaps.c and elf/dl-cache.c at each release; 2.31 and 2.41
// were checked with the loaders of Debian 11 and 13 inside their root file systems.
TEST_CASE("the root's glibc release decides which hwcaps subdirectories and cache entries count") {
  if ((clean_environment().isa_levels & kIsaV2) == 0) {
    MESSAGE("this CPU has no x86-64-v2: skipping");
    return;
  }
  // The caches come from this machine's ldconfig, which writes legacy (tls) entries before 2.37.
  auto host = glibc_release_of(*make_real_fs(), "/lib64/ld-linux-x86-64.so.2");
  if (!host || *host < GlibcRelease{2, 33} || *host >= GlibcRelease{2, 37}) {
    MESSAGE("this machine's ldconfig is not from glibc 2.33-2.36: skipping");
    return;
  }
  struct Case {
    bool with_v2;
    bool cache;
    std::string release;  // "" = the host's own loader, unchanged
    std::string expected;
  };
  const std::string v2 = "/opt/cached/glibc-hwcaps/x86-64-v2/libcached.so", tls = "/opt/cached/tls/libcached.so",
                    plain = "/opt/cached/libcached.so";
  const Case cases[] = {
      {true, true, "", v2},           {true, false, "", v2},
      {true, true, "2.31", tls},      {true, false, "2.31", tls},  // no glibc-hwcaps before 2.33
      {true, true, "2.38", v2},       {true, true, "2.41", v2},
      {false, true, "", tls},         {false, false, "", tls},
      {false, true, "2.38", tls},     {false, false, "2.38", plain},  // 2.37: no legacy subdirectories
      {false, true, "2.41", plain},   {false, false, "2.41", plain},  // 2.40: no legacy cache entries
  };
  for (const Case& c : cases) {
    CAPTURE(c.with_v2);
    CAPTURE(c.cache);
    CAPTURE(c.release);
    TempDir tmp("rootedhwcaps");
    fs::path root = build_root(tmp);
    add_hwcaps_copies(root, c.with_v2);
    if (!c.cache) fs::remove(root / "etc/ld.so.cache");
    if (!c.release.empty()) make_root_glibc(root, c.release);
    Walk walk("/opt/app/bin/app", clean_environment(), root.string());
    CHECK(walk.where("libcached.so") == c.expected);
    if (c.release.empty() && c.cache && ::geteuid() == 0) {  // the loader inside the root agrees
      CommandResult chrooted = run_command("chroot " + shell_quote(root.string()) +
                                           " /lib64/ld-linux-x86-64.so.2 --list /opt/app/bin/app 2>&1");
      CHECK_MESSAGE(chrooted.output.find("libcached.so => " + c.expected + " (") != std::string::npos, chrooted.output);
    }
  }
}

TEST_CASE("a dangling loader link: the release comes from the libc.so.6 of a system directory") {
  TempDir tmp("rooteddangling");
  fs::path root = build_root(tmp);
  make_root_glibc(root, "2.31");
  fs::remove(root / "lib64/ld-linux-x86-64.so.2");
  fs::create_symlink("/lib/x86_64-linux-gnu/ld-2.31.so", root / "lib64/ld-linux-x86-64.so.2");  // not there
  auto rooted = make_rooted_fs(root.string());
  CHECK(glibc_release_of(*rooted, "/lib64/ld-linux-x86-64.so.2", {"/lib/x86_64-linux-gnu"}) == GlibcRelease{2, 31});
  CHECK_FALSE(glibc_release_of(*rooted, "/lib64/ld-linux-x86-64.so.2").has_value());
  CHECK_FALSE(glibc_release_of(*rooted, "", {"/opt"}).has_value());
}

TEST_CASE("a FIFO or a symlink loop as the root's loader is not read; libc.so.6 answers and the walk finishes") {
  for (const std::string kind : {"fifo", "loop"}) {
    CAPTURE(kind);
    TempDir tmp("rootedhostileloader");
    fs::path root = build_root(tmp);
    make_root_glibc(root, "2.31");
    fs::path loader = root / "lib/x86_64-linux-gnu/ld-linux-x86-64.so.2";
    fs::remove(loader);
    if (kind == "fifo") REQUIRE(::mkfifo(loader.c_str(), 0600) == 0);
    else fs::create_symlink("ld-linux-x86-64.so.2", loader);
    auto rooted = make_rooted_fs(root.string());
    CHECK(glibc_release_of(*rooted, "/lib64/ld-linux-x86-64.so.2", {"/lib/x86_64-linux-gnu"}) == GlibcRelease{2, 31});
    Walk walk("/opt/app/bin/app", clean_environment(), root.string());
    CHECK(walk.where("libcached.so") == "/opt/cached/libcached.so");
  }
}

TEST_CASE("$LIB follows the root's layout: multiarch or lib64") {
  TempDir tmp("rootedlayout");
  fs::path root = tmp.path() / "root";
  copy_into(resolve_fixture("rooted/libr.so"), root / "usr/lib64/libc.so.6");
  copy_into(resolve_fixture("rooted/libcached.so"), root / "usr/lib64/libcached.so");
  copy_into(resolve_fixture("rooted/app"), root / "app");
  Walk walk("/app", clean_environment(), root.string());
  CHECK(walk.where("libcached.so") == "/usr/lib64/libcached.so");
  CHECK(walk.edge("libcached.so")->how == How::DefaultPath);
}

}  // namespace depscan::test
