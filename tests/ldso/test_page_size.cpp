// No machine here has a kernel with 16 or 64 KiB pages, so the loader cannot answer. The oracle
// is readelf's reading of each PT_LOAD and the rule of elf/dl-load.c: from glibc 2.35 an object
// maps when p_vaddr - p_offset is a multiple of the page size; before, p_align must also be a
// multiple of the page size and p_vaddr - p_offset a multiple of p_align (fixtures/pagesize).
#include <doctest/doctest.h>

#include <set>
#include <sstream>
#include <vector>

#include "ldso/finding_set.h"
#include "support.h"

namespace depscan::test {
namespace {

std::string dir() { return fixtures_dir() + "/pagesize"; }
const std::vector<std::string> kLibraries = {"lib4k.so", "lib16k.so", "lib64k.so", "lib64k_align4k.so"};

struct Load {
  uint64_t offset, vaddr, align;
};

std::vector<Load> loads_by_readelf(const std::string& path) {
  auto r = run_command("readelf -lW " + shell_quote(path));
  std::vector<Load> out;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string type, offset, vaddr, paddr, filesz, memsz, last;
    if (!(words >> type) || type != "LOAD") continue;
    words >> offset >> vaddr >> paddr >> filesz >> memsz;
    for (std::string w; words >> w;) last = w;  // flags may be one word or two
    out.push_back({std::stoull(offset, nullptr, 16), std::stoull(vaddr, nullptr, 16), std::stoull(last, nullptr, 16)});
  }
  REQUIRE_MESSAGE(!out.empty(), r.output);
  return out;
}

bool maps(const std::vector<Load>& loads, uint64_t page, bool old_glibc) {
  for (const Load& l : loads) {
    if ((l.vaddr - l.offset) % page != 0) return false;
    if (old_glibc && (l.align % page != 0 || (l.vaddr - l.offset) % l.align != 0)) return false;
  }
  return true;
}

std::set<std::string> page_findings(const std::string& args) { return finding_set(args, "page-size", 1); }

std::set<std::string> expected(const std::string& severity, uint64_t page, bool old_glibc) {
  std::set<std::string> out;
  for (const std::string& lib : kLibraries)
    if (!maps(loads_by_readelf(dir() + "/" + lib), page, old_glibc)) out.insert(severity + " " + lib);
  return out;
}

std::string all_libraries(const std::string& prefix) {
  std::string out;
  for (const std::string& lib : kLibraries) out += " " + shell_quote(prefix + lib);
  return out;
}

}  // namespace

TEST_CASE("page size: depscan refuses what glibc's rule refuses, for each page size and both rules") {
  for (uint64_t page : {4096, 16384, 65536}) {
    INFO("page size " << page);
    auto now = page_findings("--page-size " + std::to_string(page) + all_libraries(dir() + "/"));
    CHECK(now == expected("error", page, false));
    auto old = page_findings("--root " + shell_quote(dir() + "/root") + " --page-size " + std::to_string(page) +
                             all_libraries("/t/"));
    CHECK(old == expected("error", page, true));
  }
  // The fixture covers each outcome: at 64 KiB, only lib64k.so maps under the old rule.
  CHECK(expected("e", 65536, false) == std::set<std::string>{"e lib4k.so", "e lib16k.so"});
  CHECK(expected("e", 65536, true) == std::set<std::string>{"e lib4k.so", "e lib16k.so", "e lib64k_align4k.so"});
}

TEST_CASE("page size: without --page-size, aarch64 objects are held to 64 KiB pages as a warning; x86 never") {
  CHECK(page_findings(all_libraries(dir() + "/")) == expected("warning", 65536, false));
  CHECK(page_findings("--page-size 65536 " + shell_quote(dir() + "/x86/lib4k.so")).empty());
}

}  // namespace depscan::test
