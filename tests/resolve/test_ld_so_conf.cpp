// ld.so.conf: include globs (relative to the including file), comments, hwcap lines, loops.
#include <doctest/doctest.h>

#include <filesystem>
#include <algorithm>
#include <fstream>
#include <sstream>

#include "analyzer/resolve/ld_so_conf.h"
#include "support.h"

namespace depscan {
namespace {

namespace fs = std::filesystem;

void write_file(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

}  // namespace

TEST_CASE("includes, globs, comments and hwcap lines, inside a root") {
  test::TempDir tmp("ldconf");
  fs::path root = tmp.path();
  write_file(root / "etc/ld.so.conf",
             "# top comment\n/first   \ninclude ld.so.conf.d/*.conf\n  /last/ # trailing comment\nhwcap 1 x\n");
  write_file(root / "etc/ld.so.conf.d/b.conf", "/from-b\n/first\n");
  write_file(root / "etc/ld.so.conf.d/a.conf", "/from-a=libc6\ninclude /etc/extra/*.conf nested.conf\n");
  write_file(root / "etc/ld.so.conf.d/nested.conf", "/nested\n");
  write_file(root / "etc/ld.so.conf.d/.hidden.conf", "/hidden\n");
  write_file(root / "etc/ld.so.conf.d/c.conf.disabled", "/disabled\n");
  write_file(root / "etc/extra/x.conf", "/extra\n");
  auto rooted = make_rooted_fs(root.string());
  LdSoConf conf = read_ld_so_conf(*rooted);
  // a.conf's includes are read where the include line is, before a.conf goes on; the relative
  // "nested.conf" is found next to a.conf; b.conf repeats /first, which stays first.
  CHECK(conf.dirs == std::vector<std::string>{"/first", "/from-a", "/extra", "/nested", "/from-b", "/last"});
  REQUIRE(!conf.warnings.empty());
  CHECK(conf.warnings.back().find("hwcap directive ignored") != std::string::npos);
  CHECK(conf.files_read.front() == "/etc/ld.so.conf");
}

TEST_CASE("include loops terminate") {
  test::TempDir tmp("ldconfloop");
  fs::path root = tmp.path();
  write_file(root / "etc/ld.so.conf", "/top\ninclude /etc/loop/*.conf\n");
  write_file(root / "etc/loop/a.conf", "/a\ninclude /etc/ld.so.conf\ninclude b.conf\n");
  write_file(root / "etc/loop/b.conf", "/b\ninclude a.conf\n");
  fs::create_directories(root / "etc/self");
  write_file(root / "etc/self/self.conf", "include self.conf\n/self\n");
  auto rooted = make_rooted_fs(root.string());
  LdSoConf conf = read_ld_so_conf(*rooted);
  CHECK(conf.dirs == std::vector<std::string>{"/top", "/a", "/b"});
  CHECK(!conf.warnings.empty());
  LdSoConf self = read_ld_so_conf(*rooted, "/etc/self/self.conf");
  CHECK(self.dirs == std::vector<std::string>{"/self"});
}

TEST_CASE("the machine's own ld.so.conf lists the directories ldconfig uses") {
  auto real = make_real_fs();
  LdSoConf conf = read_ld_so_conf(*real);
  CHECK(!conf.files_read.empty());
  // Every directory ldconfig -v reports from the configuration is among ours.
  std::string out = test::run_command("/sbin/ldconfig -N -v 2>/dev/null | grep -v '^\\s' | cut -d: -f1").output;
  std::istringstream in(out);
  std::string dir;
  while (std::getline(in, dir)) {
    if (dir.empty() || dir.find("glibc-hwcaps") != std::string::npos) continue;
    bool system = dir == "/lib" || dir == "/usr/lib" || dir == "/lib/x86_64-linux-gnu" ||
                  dir == "/usr/lib/x86_64-linux-gnu" || dir == "/lib64" || dir == "/usr/lib64";
    if (system) continue;  // ldconfig adds its trusted directories itself
    INFO(dir);
    CHECK(std::find(conf.dirs.begin(), conf.dirs.end(), dir) != conf.dirs.end());
  }
}

}  // namespace depscan
