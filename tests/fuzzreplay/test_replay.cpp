// Runs every committed fuzz seed and every regression input (a crash once found) through the
// same entry points the fuzzers use. Under the sanitizer build this is the regression suite.
#include <filesystem>
#include <cctype>
#include <fstream>
#include <iterator>

#include <doctest/doctest.h>

#include "fuzz/fuzz_entries.h"
#include "support.h"

namespace fs = std::filesystem;

namespace {

// Seeds are committed as hex text (xxd -p), so the repository holds no binaries.
std::vector<uint8_t> read_seed(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<uint8_t> bytes;
  int high = -1;
  for (char c : text) {
    int v = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
            : (c >= 'a' && c <= 'f')                    ? c - 'a' + 10
            : (c >= 'A' && c <= 'F')                    ? c - 'A' + 10
                                                        : -1;
    if (v < 0) continue;
    if (high < 0) {
      high = v;
    } else {
      bytes.push_back(static_cast<uint8_t>(high * 16 + v));
      high = -1;
    }
  }
  return bytes;
}

}  // namespace

TEST_CASE("every fuzz seed and regression input runs cleanly") {
  fs::path base = fs::path(depscan::test::source_dir()) / "tests" / "fuzz";
  size_t inputs = 0;
  for (const auto& target : depscan::fuzz::targets()) {
    for (const char* kind : {"corpus", "regressions"}) {
      fs::path dir = base / kind / target.name;
      if (!fs::is_directory(dir)) continue;
      for (const auto& file : fs::directory_iterator(dir)) {
        if (file.path().extension() != ".hex") continue;
        std::vector<uint8_t> bytes = read_seed(file.path());
        INFO(target.name << ": " << file.path().string());
        target.entry(bytes.data(), bytes.size());
        ++inputs;
      }
    }
  }
  MESSAGE("replayed " << inputs << " inputs");
  CHECK(inputs > 0);
}
