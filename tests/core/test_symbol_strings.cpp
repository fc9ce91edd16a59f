// Symbols keep their strings as views into their binary's StringArena.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <type_traits>

#include "analyzer/input/file_source.h"
#include "analyzer/read/elf_reader.h"
#include "support.h"

using namespace depscan;

// A view made from a std::string would outlive its buffer: only views and literals make a SymbolText.
static_assert(!std::is_constructible_v<SymbolText, std::string>);
static_assert(!std::is_constructible_v<SymbolText, const std::string&>);
static_assert(std::is_constructible_v<SymbolText, std::string_view>);

TEST_CASE("a copy of a binary keeps its symbols' strings when the original is gone") {
  std::string path = test::fixtures_dir() + "/read/libuser.so.1";
  auto file = FileSource::open(path);
  REQUIRE_MESSAGE(file, path << ": " << (file ? "" : file.error()));
  auto original = std::make_unique<Binary>(read_elf(**file, path).value());
  file->reset();  // the file's buffers are gone too
  REQUIRE(!original->symbols.empty());
  std::vector<std::string> names;
  for (const Symbol& s : original->symbols) names.emplace_back(s.name);
  Binary copy = *original;
  original.reset();
  REQUIRE(copy.symbols.size() == names.size());
  for (size_t i = 0; i < names.size(); ++i) CHECK(copy.symbols[i].name == names[i]);
  bool versioned = false;
  for (const Symbol& s : copy.symbols) versioned = versioned || !s.version.empty();
  CHECK(versioned);
}

TEST_CASE("StringArena keeps every string where it first put it") {
  StringArena arena;
  std::string_view first = arena.keep("short");
  std::string_view second = arena.keep(std::string(100, 'x'));
  for (int i = 0; i < 10000; ++i) arena.keep("filler " + std::to_string(i));
  CHECK(first == "short");
  CHECK(second == std::string(100, 'x'));
}
