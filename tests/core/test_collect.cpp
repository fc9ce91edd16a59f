#include <doctest/doctest.h>

#include <sys/stat.h>

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

TEST_CASE("a directory of many binaries keeps at most kMaxOpenRoots of them open") {
  test::TempDir tmp("collectmany");
  for (size_t i = 0; i < kMaxOpenRoots + 20; ++i) write_elf_head(tmp.str() + "/lib" + std::to_string(i) + ".so");
  std::unique_ptr<FileSystem> files = make_real_fs();
  CollectedInputs inputs = collect_inputs(files, {{tmp.str()}, false, std::nullopt});
  CHECK(inputs.roots.size() == kMaxOpenRoots + 20);
  CHECK(inputs.open_roots.size() == kMaxOpenRoots);
}
