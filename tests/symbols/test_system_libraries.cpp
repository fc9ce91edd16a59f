// Zero false errors: every ELF file under the machine's library directories and the CUDA
// libraries loads on this machine (the distribution and NVIDIA ship them working), so depscan
// must report no symbol-version-not-found or undefined-symbol ERROR for any of them as a root,
// in a clean environment. The interposition warning must stay quiet on normal binaries.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

#include "support.h"
#include "toolchains.h"

using namespace depscan::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

bool is_elf(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  char magic[4] = {};
  return in.read(magic, 4) && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' && magic[3] == 'F';
}

std::vector<std::string> elf_files(const std::vector<std::string>& dirs, bool recursive) {
  std::vector<std::string> out;
  for (const std::string& dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    auto consider = [&](const fs::directory_entry& e) {
      std::error_code e2;
      if (e.is_symlink(e2) || !e.is_regular_file(e2)) return;
      if (is_elf(e.path())) out.push_back(e.path().string());
    };
    if (recursive) {
      for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
           it != fs::recursive_directory_iterator(); it.increment(ec))
        consider(*it);
    } else {
      for (const auto& e : fs::directory_iterator(dir, ec)) consider(e);
    }
  }
  return out;
}

struct Scan {
  json doc;
  double seconds = 0;
};

Scan scan_all(const std::vector<std::string>& files, const std::string& flags = "") {
  TempDir tmp("symbols-system");
  std::string list = tmp.str() + "/files";
  {
    std::ofstream out(list);
    for (const std::string& f : files) out << f << '\0';
  }
  // One depscan run with every file as a root (xargs only splits if the list is huge).
  std::string cmd = "env -u LD_LIBRARY_PATH -u LD_PRELOAD -u LD_BIND_NOW xargs -0 -n 100000 " +
                    shell_quote(depscan_bin()) + " " + flags + " --format json < " + shell_quote(list);
  auto start = std::chrono::steady_clock::now();
  auto r = run_command(cmd);
  Scan s;
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  s.doc = json::parse(r.output, nullptr, false);
  return s;
}

constexpr std::string_view kOwnReferences = " of its own through the lookup scope";

bool about_own_references(const json& finding) {
  return finding["message"].get<std::string>().find(kOwnReferences) != std::string::npos;
}

// `own`: only symbol-interposed findings about a library's references to its own definitions, or
// only the others.
int count_and_print(const json& doc, const std::string& code, const std::string& severity,
                    std::optional<bool> own = std::nullopt) {
  int n = 0;
  for (const json& f : doc["findings"]) {
    if (f["code"] != code || f["severity"] != severity) continue;
    if (own && about_own_references(f) != *own) continue;
    ++n;
    std::string fix = f.contains("fix") ? f["fix"].get<std::string>() : "";
    MESSAGE(code << " " << severity << ": " << f["message"].get<std::string>() << " (fix: " << fix << ")");
  }
  return n;
}

}  // namespace

TEST_CASE("no false symbol errors on the system and CUDA libraries") {
  std::vector<std::string> files =
      elf_files({"/usr/lib/x86_64-linux-gnu", "/usr/local/cuda/lib64"}, /*recursive=*/true);
  REQUIRE(files.size() > 100);
  Scan s = scan_all(files);
  REQUIRE_MESSAGE(!s.doc.is_discarded(), "depscan printed no JSON");
  MESSAGE(files.size() << " ELF files as roots, " << s.doc["objects"].size() << " objects, " << s.seconds << " s");
  CHECK(count_and_print(s.doc, "symbol-version-not-found", "error") == 0);
  CHECK(count_and_print(s.doc, "undefined-symbol", "error") == 0);
  // Interposition stays rare: a handful of real duplicate definitions, not noise. A library's own
  // references bound elsewhere (checked against the loader on the programs below) are counted apart.
  CHECK(count_and_print(s.doc, "symbol-interposed", "warning", false) <= 5);
  CHECK(count_and_print(s.doc, "symbol-interposed", "warning", true) <= 16);
}

namespace {

// One symbol-interposed finding about a library's own references: the library, the copy that
// takes them, and the first symbol named.
struct OwnReferences {
  std::string object, winner, symbol;
};

OwnReferences parse_own_references(const json& finding) {
  std::string message = finding["message"];
  OwnReferences out;
  out.object = message.substr(0, message.find(" calls or refers to "));
  out.winner = finding["path"];
  size_t names = message.find("'s: ");
  out.symbol = message.substr(names + 4);
  out.symbol = out.symbol.substr(0, std::min(out.symbol.find(", "), out.symbol.find('@')));
  return out;
}

// A program of the scan whose graph holds both files.
std::optional<std::string> program_loading(const json& doc, const std::string& a, const std::string& b) {
  std::vector<std::set<std::string>> reached(doc["roots"].size());
  for (const json& e : doc["edges"])
    if (!e["to"].is_null()) reached[e["root"].get<size_t>()].insert(doc["objects"][e["to"].get<size_t>()]["path"]);
  for (size_t r = 0; r < reached.size(); ++r)
    if (reached[r].count(a) && reached[r].count(b)) return doc["objects"][doc["roots"][r].get<size_t>()]["path"];
  return std::nullopt;
}

// What the loader binds, without running the program: relocation in trace mode (ldd -r's
// variables) with LD_DEBUG=bindings.
bool loader_binds(const std::string& program, const OwnReferences& own) {
  auto r = run_command("env -u LD_LIBRARY_PATH -u LD_PRELOAD LD_DEBUG=bindings LD_TRACE_LOADED_OBJECTS=1 LD_WARN=yes "
                       "LD_BIND_NOW=yes " + shell_quote(program) + " 2>&1 >/dev/null");
  std::string line = "binding file " + own.object + " [0] to " + own.winner + " [0]: normal symbol `" + own.symbol + "'";
  return r.output.find(line) != std::string::npos;
}

}  // namespace

TEST_CASE("interposition is quiet on normal programs") {
  std::vector<std::string> files = elf_files({"/usr/bin"}, /*recursive=*/false);
  REQUIRE(files.size() > 50);
  Scan s = scan_all(files);
  REQUIRE(!s.doc.is_discarded());
  MESSAGE(files.size() << " programs, " << s.seconds << " s");
  CHECK(count_and_print(s.doc, "symbol-version-not-found", "error") == 0);
  CHECK(count_and_print(s.doc, "undefined-symbol", "error") == 0);  // their copies of stdout, environ, ... are filled
  CHECK(count_and_print(s.doc, "copy-relocation-size", "warning") == 0);
  CHECK(count_and_print(s.doc, "symbol-interposed", "warning", false) <= 3);
  // Each library whose own references depscan sends elsewhere: the loader does the same.
  for (const json& f : s.doc["findings"]) {
    if (f["code"] != "symbol-interposed" || !about_own_references(f)) continue;
    OwnReferences own = parse_own_references(f);
    CAPTURE(f["message"]);
    auto program = program_loading(s.doc, own.object, own.winner);
    REQUIRE(program);
    CHECK(loader_binds(*program, own));
  }
}

TEST_CASE("the CUDA libraries bind completely, even with LD_BIND_NOW") {
  std::vector<std::string> files = elf_files({"/usr/local/cuda/lib64"}, /*recursive=*/false);
  if (!present_or_skip(!files.empty(), "the CUDA libraries in /usr/local/cuda/lib64")) return;
  Scan s = scan_all(files, "--bind-now");
  REQUIRE(!s.doc.is_discarded());
  MESSAGE(files.size() << " CUDA libraries with --bind-now, " << s.seconds << " s");
  CHECK(count_and_print(s.doc, "symbol-version-not-found", "error") == 0);
  CHECK(count_and_print(s.doc, "undefined-symbol", "error") == 0);
}
