#include <doctest/doctest.h>

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "analyzer/input/collect.h"
#include "support.h"

using namespace depscan;
namespace fs = std::filesystem;

namespace {

// The head of a 64-bit little-endian x86-64 shared object: all that telling inputs apart reads.
void write_elf_head(const std::string& path) {
  std::string head(64, '\0');
  head.replace(0, 4, "\x7f" "ELF");
  head[4] = 2;   // ELFCLASS64
  head[5] = 1;   // ELFDATA2LSB
  head[6] = 1;   // EV_CURRENT
  head[16] = 3;  // ET_DYN
  head[18] = 62; // EM_X86_64
  std::ofstream(path, std::ios::binary) << head;
}

}  // namespace

TEST_CASE("telling inputs apart keeps the roots' files open for the reader, and no others") {
  test::TempDir tmp("collect");
  write_elf_head(tmp.str() + "/libone.so");
  std::ofstream(tmp.str() + "/notes.txt") << "not a binary";
  std::unique_ptr<FileSystem> files = make_real_fs();
  CollectedInputs inputs = collect_inputs(files, {{tmp.str(), tmp.str() + "/libone.so"}, false, std::nullopt});
  REQUIRE(inputs.roots.size() == 2);  // the directory's one library and the same library by name
  REQUIRE(inputs.open_roots.size() == 1);
  const auto& [path, file] = *inputs.open_roots.begin();
  CHECK(path == tmp.str() + "/libone.so");
  struct stat st;
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK(file->info().inode == st.st_ino);
}

TEST_CASE("a directory walk stops at its entry limit and says so") {
  test::TempDir tmp("collectcap");
  for (int i = 0; i < 30; ++i) write_elf_head(tmp.str() + "/lib" + std::to_string(i) + ".so");
  std::unique_ptr<FileSystem> files = make_real_fs();
  CollectRequest request{{tmp.str()}, false, std::nullopt};
  request.max_walk_entries = 10;
  CollectedInputs capped = collect_inputs(files, request);
  CHECK(capped.roots.size() == 10);
  auto stopped = std::find_if(capped.findings.begin(), capped.findings.end(),
                              [](const Finding& f) { return f.code == "directory-too-large"; });
  REQUIRE(stopped != capped.findings.end());
  CHECK(stopped->severity == Severity::Warning);
  CHECK(stopped->message == tmp.str() + ": the walk stopped after 10 directory entries: the files beyond them are not audited");
  request.max_walk_entries = 30;  // exactly enough: no finding
  CollectedInputs whole = collect_inputs(files, request);
  CHECK(whole.roots.size() == 30);
  for (const Finding& f : whole.findings) CHECK(f.code != "directory-too-large");
}

TEST_CASE("a directory walk does not enter directories nested more than 100 deep, and says so") {
  test::TempDir tmp("collectdeep");
  std::string dir = tmp.str();
  for (int depth = 1; depth <= 102; ++depth) {
    dir += "/d";
    std::filesystem::create_directory(dir);
    if (depth == 100 || depth == 102) write_elf_head(dir + "/lib" + std::to_string(depth) + ".so");
  }
  std::unique_ptr<FileSystem> files = make_real_fs();
  CollectedInputs inputs = collect_inputs(files, {{tmp.str()}, false, std::nullopt});
  REQUIRE(inputs.roots.size() == 1);
  CHECK(inputs.roots[0].ends_with("/lib100.so"));
  auto deep = std::find_if(inputs.findings.begin(), inputs.findings.end(),
                           [](const Finding& f) { return f.code == "directory-too-large"; });
  REQUIRE(deep != inputs.findings.end());
  CHECK(deep->severity == Severity::Warning);
  CHECK(deep->message.starts_with(tmp.str() + ": the walk does not enter directories nested more than 100 deep ("));
}

TEST_CASE("a directory of many binaries keeps at most kMaxOpenRoots of them open") {
  test::TempDir tmp("collectmany");
  for (size_t i = 0; i < kMaxOpenRoots + 20; ++i) write_elf_head(tmp.str() + "/lib" + std::to_string(i) + ".so");
  std::unique_ptr<FileSystem> files = make_real_fs();
  CollectedInputs inputs = collect_inputs(files, {{tmp.str()}, false, std::nullopt});
  CHECK(inputs.roots.size() == kMaxOpenRoots + 20);
  CHECK(inputs.open_roots.size() == kMaxOpenRoots);
}
