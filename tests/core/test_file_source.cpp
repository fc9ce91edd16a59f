#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include "analyzer/input/file_source.h"
#include "support.h"

using namespace depscan;

namespace {

// A file whose byte at offset i is i % 251, so any view shows where it came from.
std::string patterned_file(const test::TempDir& dir, size_t size) {
  std::string path = dir.str() + "/patterned";
  std::string bytes(size, '\0');
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>(i % 251);
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

bool holds_offsets(ByteView view, uint64_t offset) {
  for (size_t i = 0; i < view.size(); ++i)
    if (view.data()[i] != static_cast<uint8_t>((offset + i) % 251)) return false;
  return true;
}

}  // namespace

TEST_CASE("FileSource reads any range inside the file, and nothing past its end") {
  test::TempDir dir("file-source");
  const uint64_t size = 3 * 4096 + 100;
  auto file = FileSource::open(patterned_file(dir, size));
  REQUIRE(file);
  const FileSource& source = **file;
  CHECK(source.size() == size);
  // inside one block, across a block boundary, larger than a block, up to the last byte
  for (auto [offset, length] : {std::pair<uint64_t, uint64_t>{0, 64}, {4000, 200}, {100, 9000}, {size - 10, 10},
                                {4096, 4096}, {0, size}, {size, 0}}) {
    CAPTURE(offset);
    CAPTURE(length);
    auto view = source.read(offset, length);
    REQUIRE(view);
    CHECK(view->size() == length);
    CHECK(holds_offsets(*view, offset));
  }
  CHECK_FALSE(source.read(size - 10, 11));
  CHECK_FALSE(source.read(size + 1, 0));
  CHECK_FALSE(source.read(UINT64_MAX, 2));  // offset + length wraps
  // earlier views stay valid while later reads come and go
  auto first = source.read(10, 20);
  for (uint64_t at = 0; at + 50 < size; at += 777) REQUIRE(source.read(at, 50));
  CHECK(holds_offsets(*first, 10));
}

TEST_CASE("FileSource serves a read across two blocks from the buffer that holds it, among overlapping ones") {
  test::TempDir dir("file-source-overlap");
  const uint64_t block = 4096, size = 64 * block;
  auto file = FileSource::open(patterned_file(dir, size));
  REQUIRE(file);
  const FileSource& source = **file;
  for (uint64_t b = 20; b < 60; b += 2) REQUIRE(source.read(b * block + 7, 10));  // enough buffers for the block index
  // Buffers over blocks 3-4 and 1-2 first, then one over 2-3 for a read across the 2|3 boundary.
  REQUIRE(source.read(3 * block + 100, block));
  REQUIRE(source.read(1 * block + 100, block));
  auto across = source.read(3 * block - 50, 100);
  REQUIRE(across);
  // A second read across that boundary is served from the same buffer: no new one is read.
  auto again = source.read(3 * block - 80, 200);
  REQUIRE(again);
  CHECK(holds_offsets(*again, 3 * block - 80));
  CHECK(across->data() - again->data() == 30);
  // Every window, in an order that jumps back and forth, holds its own bytes.
  for (uint64_t step = 0; step < 64; ++step) {
    uint64_t offset = (step * 2741) % (size - block);
    auto view = source.read(offset, 1 + step * 61 % block);
    REQUIRE(view);
    CHECK(holds_offsets(*view, offset));
  }
}

TEST_CASE("FileSource refuses what is not a regular file") {
  test::TempDir dir("file-source-kinds");
  CHECK_FALSE(FileSource::open(dir.str()));
  CHECK_FALSE(FileSource::open(dir.str() + "/missing"));
  CHECK(FileSource::open(dir.str() + "/missing").error() == "No such file or directory");
}

TEST_CASE("SourceRange finds strings longer than its first window, across blocks, and stops at its end") {
  test::TempDir dir("source-range");
  std::string path = dir.str() + "/strings";
  std::string text = std::string(4090, 'a') + '\0' + std::string(5000, 'b') + '\0' + "tail";  // no NUL after "tail"
  std::ofstream(path, std::ios::binary).write(text.data(), static_cast<std::streamsize>(text.size()));
  auto file = FileSource::open(path);
  REQUIRE(file);
  SourceRange all(**file, 0, text.size());
  CHECK(all.cstring(0) == std::string(4090, 'a'));
  CHECK(all.cstring(4091) == std::string(5000, 'b'));
  CHECK(all.cstring(4091 + 4990) == std::string(10, 'b'));
  CHECK_FALSE(all.cstring(text.size() - 4));  // runs to the end of the range without a NUL
  CHECK_FALSE(all.cstring(text.size()));
  SourceRange cut = *all.sub(4091, 100);  // the range ends before the string does
  CHECK_FALSE(cut.cstring(0));
  CHECK(all.read<uint32_t>(4091) == 0x62626262u);
  CHECK_FALSE(all.read<uint32_t>(text.size() - 3));
}
