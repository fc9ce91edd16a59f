// The hwcaps subdirectories depscan searches must be the ones this machine's loader lists as
// "searched" in `ld.so --help`, in the same order.
#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>

#include "analyzer/resolve/hwcaps.h"
#include "support.h"

namespace depscan {

namespace {

struct LoaderHelp {
  std::vector<std::string> levels;          // glibc-hwcaps subdirectories, searched, in order
  std::vector<std::string> legacy;          // legacy names, searched, in order
  std::string platform;                     // the AT_PLATFORM entry
};

LoaderHelp loader_help() {
  LoaderHelp help;
  std::istringstream in(test::run_command("/lib64/ld-linux-x86-64.so.2 --help 2>&1").output);
  std::string line;
  int section = 0;
  while (std::getline(in, line)) {
    if (line.rfind("Subdirectories of glibc-hwcaps", 0) == 0) section = 1;
    else if (line.rfind("Legacy HWCAP", 0) == 0) section = 2;
    else if (!line.empty() && line[0] != ' ') section = 0;
    else if (section != 0 && line.find("searched") != std::string::npos) {
      std::string name = line.substr(2, line.find(' ', 2) - 2);
      (section == 1 ? help.levels : help.legacy).push_back(name);
      if (line.find("AT_PLATFORM") != std::string::npos) help.platform = name;
    }
  }
  return help;
}

}  // namespace

TEST_CASE("glibc-hwcaps levels and platform match ld.so --help") {
  LoaderHelp help = loader_help();
  HwcapInfo info = detect_hwcaps();
  CHECK(info.glibc_hwcaps == help.levels);
  CHECK(info.platform == help.platform);
  // The legacy names ld.so lists as searched: the hwcap bits and the platform, and "tls".
  std::vector<std::string> ours;
  for (int bit = 0; bit < 3; ++bit)
    if (info.hwcap & (1ull << bit)) ours.push_back(x86_hwcap_name(bit));
  ours.push_back(info.platform);
  ours.push_back("tls");
  std::sort(ours.begin(), ours.end());
  std::sort(help.legacy.begin(), help.legacy.end());
  CHECK(ours == help.legacy);
}

TEST_CASE("legacy subdirectories follow glibc's power-set order") {
  // The order LD_DEBUG=libs shows on x86-64: hwcap x86_64, platform x86_64, tls.
  CHECK(legacy_hwcap_subdirs({"x86_64", "x86_64", "tls"}) ==
        std::vector<std::string>{"tls/x86_64/x86_64", "tls/x86_64", "tls/x86_64", "tls", "x86_64/x86_64",
                                 "x86_64", "x86_64"});
  CHECK(legacy_hwcap_subdirs({"tls"}) == std::vector<std::string>{"tls"});
  CHECK(glibc_hwcaps_for(kIsaBaseline | kIsaV2 | kIsaV3) == std::vector<std::string>{"x86-64-v3", "x86-64-v2"});
  CHECK(glibc_hwcaps_for(kIsaBaseline | kIsaV3).empty());  // v3 without v2 does not count
}

TEST_CASE("the legacy search order matches the loader's own trace") {
  // LD_DEBUG=libs prints every path tried; the subdirectories before the directory itself must
  // be exactly ours, glibc-hwcaps first.
  std::string exe = test::fixtures_dir() + "/resolve/chain/exe_runpath";
  std::string out = test::run_command("env -u LD_LIBRARY_PATH LD_DEBUG=libs " + test::shell_quote(exe) + " 2>&1").output;
  std::string dir = "/chain/lib1/";
  std::vector<std::string> tried;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    size_t at = line.find("trying file=");
    if (at == std::string::npos || line.find(dir) == std::string::npos) continue;
    std::string path = line.substr(at + 12);
    std::string rest = path.substr(path.find(dir) + dir.size());
    const std::string name = "liba.so";
    if (rest.size() >= name.size() && rest.compare(rest.size() - name.size(), name.size(), name) == 0)
      tried.push_back(rest.substr(0, rest.size() - name.size()));
  }
  HwcapInfo info = detect_hwcaps();
  std::vector<std::string> expected;
  for (const std::string& level : info.glibc_hwcaps) expected.push_back("glibc-hwcaps/" + level + "/");
  for (const std::string& sub : info.legacy_subdirs) expected.push_back(sub + "/");
  expected.push_back("");
  CHECK(tried == expected);
}

}  // namespace depscan
