// The analysed system's glibc release, read from its loader's banner, decides which hwcaps
// subdirectories and ld.so.cache entries the loader uses.
#include <doctest/doctest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <tuple>

#include "analyzer/resolve/glibc_release.h"

namespace depscan {

TEST_CASE("the release comes from the banner ld.so and libc.so.6 carry") {
  CHECK(parse_release_banner("GNU C Library (Debian GLIBC 2.31-13+deb11u11) stable release version 2.31.\n") ==
        GlibcRelease{2, 31});
  CHECK(parse_release_banner(std::string("\0\0ld.so (GNU libc) stable release version 2.41.9000.", 52)) ==
        GlibcRelease{2, 41});
  CHECK(parse_release_banner("release version x; release version 2.; release version 2.38.") == GlibcRelease{2, 38});
  CHECK_FALSE(parse_release_banner("release version ").has_value());
  CHECK_FALSE(parse_release_banner("release version 2").has_value());
  CHECK_FALSE(parse_release_banner("no banner here").has_value());
  CHECK_FALSE(parse_release_banner("release version 99999999999999999999.1").has_value());
}

TEST_CASE("on the host, the glibc depscan runs with is the release in the loader's own banner") {
  std::ifstream in("/lib64/ld-linux-x86-64.so.2", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto from_file = parse_release_banner(bytes);
  REQUIRE(from_file.has_value());  // glibc 2.33 and later
  auto fs = make_real_fs();
  CHECK(glibc_release_of(*fs, "/lib64/ld-linux-x86-64.so.2") == from_file);
  CHECK_FALSE(glibc_release_of(*fs, "/nonexistent/ld.so").has_value());
}

TEST_CASE("hwcaps rules change at 2.33, 2.37 and 2.40; an unknown release is treated as 2.36") {
  auto rules = [](std::optional<GlibcRelease> r) {
    HwcapRules h = hwcap_rules_for(r);
    return std::tuple{h.glibc_hwcaps, h.legacy_subdirs, h.legacy_cache_entries};
  };
  CHECK(rules(GlibcRelease{2, 28}) == std::tuple{false, true, true});
  CHECK(rules(GlibcRelease{2, 32}) == std::tuple{false, true, true});
  CHECK(rules(GlibcRelease{2, 33}) == std::tuple{true, true, true});
  CHECK(rules(GlibcRelease{2, 36}) == std::tuple{true, true, true});
  CHECK(rules(GlibcRelease{2, 37}) == std::tuple{true, false, true});
  CHECK(rules(GlibcRelease{2, 39}) == std::tuple{true, false, true});
  CHECK(rules(GlibcRelease{2, 40}) == std::tuple{true, false, false});
  CHECK(rules(std::nullopt) == std::tuple{true, true, true});
}

TEST_CASE("why's line names the release and what its loader uses") {
  CHECK(describe_hwcap_rules(GlibcRelease{2, 31}) ==
        "glibc 2.31: no glibc-hwcaps subdirectories (added in 2.33); legacy hwcap subdirectories; legacy ld.so.cache "
        "entries");
  CHECK(describe_hwcap_rules(GlibcRelease{2, 41}) ==
        "glibc 2.41: glibc-hwcaps subdirectories; no legacy hwcap subdirectories (removed in 2.37); no legacy "
        "ld.so.cache entries (skipped from 2.40)");
  CHECK(describe_hwcap_rules(std::nullopt).rfind("glibc release unknown (taken as 2.36): glibc-hwcaps", 0) == 0);
}

}  // namespace depscan
