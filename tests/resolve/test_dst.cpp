// $ORIGIN / $LIB / $PLATFORM substitution and search-list splitting (glibc's is_dst,
// _dl_dst_substitute and fillin_rpath rules).
#include <doctest/doctest.h>

#include "analyzer/resolve/dst.h"
#include "analyzer/resolve/resolve.h"

namespace depscan {
namespace {

DstContext context() {
  DstContext ctx;
  ctx.origin = "/opt/app/lib";
  ctx.lib = "lib/x86_64-linux-gnu";
  ctx.platform = "x86_64";
  ctx.trusted_dirs = {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib", "/usr/lib"};
  return ctx;
}

}  // namespace

TEST_CASE("both spellings of every token are substituted") {
  DstContext ctx = context();
  CHECK(substitute_dst("$ORIGIN/../x", ctx) == "/opt/app/lib/../x");
  CHECK(substitute_dst("${ORIGIN}/../x", ctx) == "/opt/app/lib/../x");
  CHECK(substitute_dst("/usr/$LIB/a", ctx) == "/usr/lib/x86_64-linux-gnu/a");
  CHECK(substitute_dst("/usr/${LIB}/a", ctx) == "/usr/lib/x86_64-linux-gnu/a");
  CHECK(substitute_dst("/p/$PLATFORM", ctx) == "/p/x86_64");
  CHECK(substitute_dst("/p/${PLATFORM}x", ctx) == "/p/x86_64x");
  CHECK(substitute_dst("$ORIGIN:$ORIGIN", ctx) == "/opt/app/lib:/opt/app/lib");
}

TEST_CASE("what is not a known token stays as written") {
  DstContext ctx = context();
  CHECK(substitute_dst("$ORIGINAL/x", ctx) == "$ORIGINAL/x");   // longer identifier
  CHECK(substitute_dst("$LIBRARY", ctx) == "$LIBRARY");
  CHECK(substitute_dst("${ORIGIN/x", ctx) == "${ORIGIN/x");     // no closing brace
  CHECK(substitute_dst("$FOO/a$", ctx) == "$FOO/a$");
  CHECK_FALSE(has_dst("$ORIGINAL"));
  CHECK(has_dst("a${LIB}b"));
  CHECK(has_dst("$PLATFORM"));
}

TEST_CASE("secure mode keeps $ORIGIN only as a leading element inside trusted directories") {
  DstContext ctx = context();
  ctx.secure = true;
  ctx.is_executable = true;
  CHECK_FALSE(substitute_dst("$ORIGIN/x", ctx).has_value());  // /opt/app/lib is not trusted
  ctx.origin = "/usr/lib/x86_64-linux-gnu";
  CHECK(substitute_dst("$ORIGIN/x", ctx) == "/usr/lib/x86_64-linux-gnu/x");
  CHECK_FALSE(substitute_dst("/a$ORIGIN", ctx).has_value());  // not the first thing
  CHECK(substitute_dst("/usr/$LIB", ctx) == "/usr/lib/x86_64-linux-gnu");
  ctx.origin.clear();
  ctx.secure = false;
  CHECK_FALSE(substitute_dst("$ORIGIN/x", ctx).has_value());  // unknown origin: element dropped
}

TEST_CASE("search lists: empty element is the current directory, duplicates and trailing slashes go") {
  DstContext ctx = context();
  CHECK(split_search_path("/a:/b/:/a", ":", ctx) == std::vector<std::string>{"/a", "/b"});
  CHECK(split_search_path("/a::/b", ":", ctx) == std::vector<std::string>{"/a", "", "/b"});
  CHECK(split_search_path(":", ":", ctx) == std::vector<std::string>{""});
  CHECK(split_search_path("/a;/b", ":;", ctx) == std::vector<std::string>{"/a", "/b"});
  CHECK(split_search_path("/a:;/b", ":;", ctx) == std::vector<std::string>{"/a", "", "/b"});  // LD_LIBRARY_PATH
  CHECK(split_search_path("$ORIGIN/../lib:/", ":", ctx) == std::vector<std::string>{"/opt/app/lib/../lib", "/"});
  ctx.origin.clear();
  CHECK(split_search_path("$ORIGIN:/x", ":", ctx) == std::vector<std::string>{"/x"});
}

TEST_CASE("LD_PRELOAD and /etc/ld.so.preload splitting") {
  CHECK(split_preload_list(" libx.so:/p/liby.so  ") == std::vector<std::string>{"libx.so", "/p/liby.so"});
  CHECK(parse_ld_so_preload("# comment libno.so\nlibone.so libtwo.so:/x/libthree.so\t#tail\n") ==
        std::vector<std::string>{"libone.so", "libtwo.so", "/x/libthree.so"});
}

}  // namespace depscan
