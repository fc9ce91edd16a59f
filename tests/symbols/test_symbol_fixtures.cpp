// Differential tests: every fixture in fixtures/symbols/ is run by the real loader with and
// without LD_BIND_NOW=1, and depscan (with --bind-now for the second run) must predict the same
// error - same code and same symbol or version - and no error where the loader has none.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "support.h"

using namespace depscan::test;
using nlohmann::json;

namespace {

struct LoadError {
  std::string code;     // undefined-symbol or symbol-version-not-found
  std::string subject;  // "foo_old", "bar_gone, version BAR_1", "FOO_2", "weak FOO_2"
  bool operator<(const LoadError& o) const { return std::tie(code, subject) < std::tie(o.code, o.subject); }
  bool operator==(const LoadError& o) const { return code == o.code && subject == o.subject; }
};

std::ostream& operator<<(std::ostream& os, const LoadError& e) { return os << e.code << " " << e.subject; }

// The loader's and depscan's messages share the loader's wording.
std::optional<LoadError> parse_error(const std::string& text) {
  static const std::regex undefined(R"(undefined symbol: ([^,\s;()]+)(, version ([^\s;()]+))?)");
  static const std::regex version(R"(version [`']([^']+)' not found \(required by)");
  std::smatch m;
  bool weak = text.find("weak version") != std::string::npos;  // only noted: a lookup error may follow
  if (std::regex_search(text, m, version) && !(weak && text.find("undefined symbol") != std::string::npos))
    return LoadError{"symbol-version-not-found", (weak ? "weak " : "") + m[1].str()};
  if (std::regex_search(text, m, undefined))
    return LoadError{"undefined-symbol", m[2].matched ? m[1].str() + ", version " + m[3].str() : m[1].str()};
  return std::nullopt;
}

std::string fixture_dir(const std::string& name) { return fixtures_dir() + "/symbols/" + name; }

std::string case_value(const std::string& name, const std::string& key) {
  std::ifstream in(fixture_dir(name) + "/case");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key + " ", 0) == 0) return line.substr(key.size() + 1);
  return "";
}

struct LoaderRun {
  int exit_code = 0;
  std::string output;
  std::optional<LoadError> error;  // only when the program failed
};

LoaderRun run_fixture(const std::string& name, bool bind_now, const std::string& args) {
  std::string env = bind_now ? "env -u LD_LIBRARY_PATH -u LD_PRELOAD LD_BIND_NOW=1"
                             : "env -u LD_LIBRARY_PATH -u LD_PRELOAD -u LD_BIND_NOW";
  auto r = run_command("cd " + shell_quote(fixture_dir(name)) + " && " + env + " ./app " + args + " 2>&1");
  LoaderRun run{r.exit_code, r.output, std::nullopt};
  if (r.exit_code != 0) run.error = parse_error(r.output);
  return run;
}

struct Prediction {
  int exit_code = 0;
  json doc;
  std::set<LoadError> errors;    // error findings of the two load-time codes
  std::set<LoadError> warnings;  // warning findings of the same codes
};

Prediction predict(const std::string& name, bool bind_now, const std::string& extra = "") {
  std::string cmd = "env -u LD_LIBRARY_PATH -u LD_PRELOAD " + shell_quote(depscan_bin()) +
                    (bind_now ? " --bind-now" : "") + extra + " --format json " + shell_quote(fixture_dir(name) + "/app");
  auto r = run_command(cmd);
  Prediction p;
  p.exit_code = r.exit_code;
  p.doc = json::parse(r.output, nullptr, false);
  REQUIRE_MESSAGE(!p.doc.is_discarded(), "depscan printed no JSON for " << name << ": " << r.output);
  for (const json& f : p.doc["findings"]) {
    std::string code = f["code"];
    if (code != "undefined-symbol" && code != "symbol-version-not-found") continue;
    const std::string& message = f["message"].get_ref<const std::string&>();
    if (message.starts_with("Inconsistency detected by ld.so") || message.find("no version information available") != std::string::npos)
      continue;  // an assertion, a note: no lookup error
    auto parsed = parse_error(f["message"].get<std::string>());
    REQUIRE_MESSAGE(parsed, "unparsable message: " << f["message"]);
    parsed->code = code;
    (f["severity"] == "error" ? p.errors : p.warnings).insert(*parsed);
  }
  return p;
}

const std::vector<std::string> kCases = {"removed_func",  "removed_func_now", "func_pointer", "removed_versioned", "zero_value",
                                         "data_ref",      "copy_ref",         "copy_same",        "copy_grown",
                                         "weak_ref",
                                         "version_missing",
                                         "weak_version",  "weak_version_flag", "weak_need_strong_ref", "interposed",
                                         "own_interposed", "host_symbol",   "versioned_ok", "dlopen_siblings",
                                         "dlopen_siblings_needed", "dlopen_failed_first", "dlopen_failed_first_ok"};

// The case's `matrix FILE`: depscan is told what its app opens with dlopen.
std::string case_options(const std::string& name) {
  std::string matrix = case_value(name, "matrix");
  return matrix.empty() ? "" : " --matrix " + shell_quote(fixture_dir(name) + "/" + matrix);
}

}  // namespace

TEST_CASE("depscan predicts the loader's symbol errors, with and without LD_BIND_NOW") {
  REQUIRE_MESSAGE(std::filesystem::exists(fixture_dir("removed_func") + "/app"),
                  "fixtures missing: run fixtures/symbols/build.sh " << fixtures_dir() << "/symbols");
  size_t loader_failures = 0;
  for (const std::string& name : kCases) {
    // the case's own promise: with every symbol bound at start, the broken ones do fail
    std::string expect = case_value(name, "expect");
    bool must_fail = expect.starts_with("undefined symbol") || expect.ends_with("not found");
    for (bool bind_now : {false, true}) {
      CAPTURE(name);
      CAPTURE(bind_now);
      LoaderRun loader = run_fixture(name, bind_now, case_value(name, "args"));
      Prediction p = predict(name, bind_now, case_options(name));
      if (loader.exit_code != 0) ++loader_failures;
      if (bind_now && must_fail) {
        CHECK_MESSAGE(loader.exit_code != 0, "the fixture no longer breaks: " << loader.output);
        CHECK_MESSAGE(loader.output.find(expect) != std::string::npos, "expected '" << expect << "': " << loader.output);
      }
      if (expect == "no error") CHECK(loader.exit_code == 0);
      if (bind_now && expect.starts_with("Symbol `"))  // a warning the loader prints and goes on
        CHECK_MESSAGE(loader.output.find(expect) != std::string::npos, "expected '" << expect << "': " << loader.output);
      if (loader.exit_code != 0) {
        REQUIRE_MESSAGE(loader.error, "the loader failed without a symbol error: " << loader.output);
        MESSAGE(name << std::string(bind_now ? " (LD_BIND_NOW=1)" : "") << ": loader says " << *loader.error);
        CHECK_MESSAGE(p.errors.count(*loader.error) == 1,
                      "depscan did not predict " << *loader.error << "; loader: " << loader.output);
        CHECK(p.exit_code == 1);
      } else {
        CHECK_MESSAGE(p.errors.empty(), "depscan predicts an error the loader does not have: "
                                            << (p.errors.empty() ? LoadError{} : *p.errors.begin()));
        CHECK(p.exit_code == 0);
      }
    }
  }
  CHECK(loader_failures >= 10);  // the loader did fail, so the agreement above compared errors
}

TEST_CASE("a reference named after a library it NEEDs (foo_old, libfoo.so.1) blames the copy loaded, as the loader does") {
  SUBCASE("a program") {
    Prediction p = predict("removed_func", false);
    bool named = false;
    for (const json& f : p.doc["findings"])
      if (f["code"] == "undefined-symbol")
        named |= f["message"].get<std::string>().find("undefined symbol: foo_old (named after libfoo.so.1, which it NEEDs: "
                                                      "the loaded " + fixture_dir("removed_func") + "/libfoo.so.1 does not "
                                                      "define it") != std::string::npos;
    CHECK(named);
  }
  SUBCASE("a library that lists the symbol with value 0, which the loader skips") {
    Prediction p = predict("zero_value", true);
    bool named = false;
    for (const json& f : p.doc["findings"])
      if (f["code"] == "undefined-symbol")
        named |= f["message"].get<std::string>().find("the loaded " + fixture_dir("zero_value") + "/libfoo.so.1 lists it "
                                                      "with value 0, which the loader does not take for a definition") !=
                 std::string::npos;
    CHECK(named);
  }
  SUBCASE("a library scanned on its own: not left to the program that loads it") {
    std::string lib = fixture_dir("removed_func_plugin") + "/libplug.so";
    for (bool bind_now : {false, true}) {
      CAPTURE(bind_now);
      auto loaded = run_command("env -u LD_LIBRARY_PATH -u LD_PRELOAD python3 -c 'import ctypes, os, sys\ntry:\n  "
                                "ctypes.CDLL(sys.argv[1], mode=(os.RTLD_NOW if sys.argv[2] == \"1\" else os.RTLD_LAZY)); "
                                "print(\"loaded\")\nexcept OSError as e:\n  print(e)' " + shell_quote(lib) + (bind_now ? " 1" : " 0"));
      auto r = run_command("env -u LD_LIBRARY_PATH -u LD_PRELOAD " + shell_quote(depscan_bin()) + (bind_now ? " --bind-now" : "") +
                           " --format json " + shell_quote(lib));
      json doc = json::parse(r.output, nullptr, false);
      REQUIRE(!doc.is_discarded());
      std::vector<json> undefined;
      for (const json& f : doc["findings"])
        if (f["code"] == "undefined-symbol") undefined.push_back(f);
      REQUIRE(undefined.size() == 1);
      CHECK(undefined[0]["message"].get<std::string>().find("named after libfoo.so.1") != std::string::npos);
      CHECK(undefined[0]["message"].get<std::string>().find("the program that loads") == std::string::npos);
      // RTLD_NOW fails at dlopen, as --bind-now predicts; RTLD_LAZY loads, and the call would fail
      CHECK(loaded.output.find(bind_now ? "undefined symbol: foo_old" : "loaded") != std::string::npos);
      CHECK(undefined[0]["severity"] == (bind_now ? "error" : "warning"));
    }
  }
}

// python3 imports pyext from DIR; what the import printed (the loader's or the module's error).
std::string import_with_python(const std::string& dir) {
  auto r = run_command("cd / && python3 -c " + shell_quote("import sys; sys.path.insert(0, sys.argv[1]); import pyext") +
                       " " + shell_quote(std::filesystem::absolute(dir).string()) + " 2>&1");
  return r.output;
}

json findings_for(const std::string& module_path) {
  auto r = run_command("env -u LD_LIBRARY_PATH -u LD_PRELOAD " + shell_quote(depscan_bin()) + " --format json " +
                       shell_quote(module_path));
  json doc = json::parse(r.output, nullptr, false);
  REQUIRE_MESSAGE(!doc.is_discarded(), "depscan printed no JSON for " << module_path << ": " << r.output);
  return doc["findings"];
}

std::vector<json> of_code(const json& findings, const std::string& code) {
  std::vector<json> out;
  for (const json& f : findings)
    if (f["code"] == code) out.push_back(f);
  return out;
}

TEST_CASE("python-extension: the interpreter defines an extension module's C API, as importing it shows") {
  std::string ok = fixture_dir("python_ok"), foreign = fixture_dir("python_foreign");
  REQUIRE(std::filesystem::exists(ok + "/pyext.so"));
  // The truth: the module's init ran (its RuntimeError), or the loader refused the one foreign symbol.
  std::string ok_import = import_with_python(ok), foreign_import = import_with_python(foreign);
  REQUIRE_MESSAGE(ok_import.find("RuntimeError: pyext initialised") != std::string::npos, ok_import);
  REQUIRE_MESSAGE(foreign_import.find("undefined symbol: not_in_python") != std::string::npos, foreign_import);

  json ok_findings = findings_for(ok + "/pyext.so");
  CHECK(of_code(ok_findings, "undefined-symbol").empty());
  auto ok_python = of_code(ok_findings, "python-extension");
  REQUIRE(ok_python.size() == 1);
  CHECK(ok_python[0]["severity"] == "info");
  std::string ok_message = ok_python[0]["message"];
  CHECK(ok_message.find("its 2 Python C-API symbols") != std::string::npos);
  CHECK(ok_message.find("PyErr_SetString") != std::string::npos);
  CHECK(ok_message.find("PyExc_RuntimeError") != std::string::npos);

  json foreign_findings = findings_for(foreign + "/pyext.so");
  auto warned = of_code(foreign_findings, "undefined-symbol");
  REQUIRE(warned.size() == 1);
  std::string message = warned[0]["message"];
  CHECK(message.find("undefined symbol: not_in_python;") != std::string::npos);
  CHECK(message.find("PyErr_SetString") == std::string::npos);
  CHECK(of_code(foreign_findings, "python-extension").size() == 1);
}

TEST_CASE("--no-symbols drops the symbol-binding checks and keeps the version checks") {
  Prediction removed = predict("removed_func_now", false, " --no-symbols");
  CHECK(removed.errors.empty());  // undefined-symbol needs the symbol tables
  CHECK(removed.doc["objects"].size() == predict("removed_func_now", false).doc["objects"].size());
  Prediction version = predict("version_missing", false, " --no-symbols");
  CHECK(version.errors.count(LoadError{"symbol-version-not-found", "FOO_2"}) == 1);  // DT_VERNEED is read
  CHECK(version.exit_code == 1);
  Prediction interposed = predict("interposed", false, " --no-symbols");
  for (const json& f : interposed.doc["findings"]) CHECK(f["code"] != "symbol-interposed");
}

TEST_CASE("lazy binding: what depscan only warns about fails at the first call") {
  for (std::string name : {"removed_func", "removed_versioned"}) {
    CAPTURE(name);
    LoaderRun at_start = run_fixture(name, false, "");
    CHECK(at_start.exit_code == 0);
    LoaderRun at_call = run_fixture(name, false, "call");
    REQUIRE(at_call.error);
    Prediction p = predict(name, false);
    CHECK(p.errors.empty());
    CHECK(p.warnings.count(*at_call.error) == 1);
    CHECK(p.doc["findings"].dump().find("first called") != std::string::npos);
  }
}

TEST_CASE("LD_BIND_NOW in depscan's environment is the default of --bind-now, as glibc reads it (any non-empty value)") {
  auto undefined_severity = [](const std::string& env) {
    auto r = run_command(env + " " + shell_quote(depscan_bin()) + " --format json " + shell_quote(fixture_dir("removed_func") + "/app"));
    json doc = json::parse(r.output, nullptr, false);
    REQUIRE(!doc.is_discarded());
    std::string severity;
    for (const json& f : doc["findings"])
      if (f["code"] == "undefined-symbol") severity = f["severity"];
    return severity;
  };
  CHECK(undefined_severity("env -u LD_BIND_NOW") == "warning");
  CHECK(undefined_severity("env LD_BIND_NOW=") == "warning");
  CHECK(undefined_severity("env LD_BIND_NOW=1") == "error");
  CHECK(undefined_severity("env LD_BIND_NOW=no") == "error");
}

TEST_CASE("a version need whose file nothing loads stops the loader, whichever library defines the version") {
  LoaderRun loader = run_fixture("version_file_unloaded", false, "");
  CHECK(loader.exit_code != 0);
  CHECK(loader.output.find(case_value("version_file_unloaded", "expect")) != std::string::npos);
  Prediction p = predict("version_file_unloaded", false);
  CHECK(p.exit_code == 1);
  size_t said = 0;
  for (const json& f : p.doc["findings"])
    said += f["code"] == "symbol-version-not-found" && f["severity"] == "error" &&
            f["message"].get<std::string>().find("Assertion `needed != NULL' failed! (" + fixture_dir("version_file_unloaded") +
                                                 "/app needs FOO_1 from libver.so.1, which nothing in the process loads") !=
                std::string::npos;
  CHECK(said == 1);
  CHECK(predict("versioned_ok", false).exit_code == 0);  // the same needs with the file loaded
}

TEST_CASE("a versioned reference meeting its name in an unversioned copy of the file it names: check_match asserts") {
  std::string expect = case_value("version_file_unversioned", "expect");
  for (bool bind_now : {false, true}) {
    CAPTURE(bind_now);
    LoaderRun loader = run_fixture("version_file_unversioned", bind_now, "");
    CHECK(loader.exit_code != 0);
    CHECK(loader.output.find(expect) != std::string::npos);
    Prediction p = predict("version_file_unversioned", bind_now);
    std::string severity;
    for (const json& f : p.doc["findings"])
      if (f["code"] == "symbol-version-not-found" && f["message"].get<std::string>().find(expect) != std::string::npos &&
          f["message"].get<std::string>().find("binds f1@FOO_1 in " + fixture_dir("version_file_unversioned") + "/libver.so.1") !=
              std::string::npos)
        severity = f["severity"];
    CHECK(severity == (bind_now ? "error" : "warning"));  // lazily, at f1's first call
  }
}

TEST_CASE("a weak version need is noted by the loader and predicted as a warning") {
  LoaderRun loader = run_fixture("weak_version_flag", true, "");
  CHECK(loader.exit_code == 0);
  CHECK(loader.output.find("weak version `FOO_2' not found") != std::string::npos);
  Prediction p = predict("weak_version_flag", true);
  CHECK(p.errors.empty());
  CHECK(p.warnings.count(LoadError{"symbol-version-not-found", "weak FOO_2"}) == 1);
}

TEST_CASE("a copy relocation: a missing definition fails at load; a grown one is the loader's size warning") {
  Prediction missing = predict("copy_ref", false);
  bool said_copy = false;
  for (const json& f : missing.doc["findings"])
    said_copy |= f["code"] == "undefined-symbol" && f["severity"] == "error" &&
                 f["message"].get<std::string>().find("copy_counter") != std::string::npos &&
                 f["message"].get<std::string>().find("a copy relocation") != std::string::npos;
  CHECK(said_copy);

  LoaderRun loader = run_fixture("copy_grown", false, "");
  CHECK(loader.exit_code == 0);
  CHECK(loader.output.find("Symbol `copy_table' has different size in shared object, consider re-linking") != std::string::npos);
  Prediction grown = predict("copy_grown", false);
  CHECK(grown.exit_code == 0);
  std::vector<json> size = {};
  for (const json& f : grown.doc["findings"])
    if (f["code"] == "copy-relocation-size") size.push_back(f);
  REQUIRE(size.size() == 1);
  CHECK(size[0]["severity"] == "warning");
  CHECK(size[0]["message"].get<std::string>().find("Symbol `copy_table' has different size in shared object, consider "
                                                   "re-linking: the program's copy of copy_table holds 16 bytes, " +
                                                   fixture_dir("copy_grown") + "/libcopy.so.1 defines it with 64") !=
        std::string::npos);
  // depscan symbol: the program's copy is a use, bound past the program to the library, or to nothing
  auto text = run_command(shell_quote(depscan_bin()) + " symbol copy_counter " + shell_quote(fixture_dir("copy_ref") + "/app"));
  CHECK(text.output.find("/app  copy_counter (copy relocation) -> UNRESOLVED") != std::string::npos);
  text = run_command(shell_quote(depscan_bin()) + " symbol copy_counter " + shell_quote(fixture_dir("copy_same") + "/app"));
  CHECK(text.output.find("/app  copy_counter (copy relocation) -> " + fixture_dir("copy_same") + "/libcopy.so.1") != std::string::npos);
  // a copy names its version need too: stdout@GLIBC_2.2.5 is among the symbols too new for glibc 2.2
  text = run_command(shell_quote(depscan_bin()) + " --target-glibc 2.2 " + shell_quote(fixture_dir("copy_same") + "/app"));
  CHECK(text.output.find("newer than --target-glibc 2.2: fprintf, stdout") != std::string::npos);
  text = run_command(shell_quote(depscan_bin()) + " inspect --symbols " + shell_quote(fixture_dir("copy_same") + "/app"));
  CHECK(text.output.find("COPY stdout@GLIBC_2.2.5 (from libc.so.6)") != std::string::npos);
  // the program's copies of libc's variables (stdout, stderr) are not copy-relocation findings
  REQUIRE(run_command("readelf -rW " + shell_quote(fixture_dir("copy_same") + "/app") + " | grep -c 'R_X86_64_COPY.*stdout'").output == "1\n");
  Prediction ok = predict("copy_same", false);
  CHECK(ok.errors.empty());
  for (const json& f : ok.doc["findings"]) CHECK(f["code"] != "copy-relocation-size");
}

TEST_CASE("symbol-interposed names the copy that wins and the library the user was linked against") {
  LoaderRun loader = run_fixture("interposed", false, "");
  REQUIRE(loader.exit_code == 0);
  CHECK(loader.output.find("first") == 0);  // libuser's call really went to libfirst
  Prediction p = predict("interposed", false);
  std::istringstream expected(case_value("interposed", "interposed"));
  std::string winner, intended;
  expected >> winner >> intended;
  int found = 0;
  for (const json& f : p.doc["findings"]) {
    if (f["code"] != "symbol-interposed") continue;
    ++found;
    std::string message = f["message"];
    CHECK(f["severity"] == "warning");
    CHECK(message.find("from " + fixture_dir("interposed") + "/" + intended) != std::string::npos);
    CHECK(message.find("bind to " + fixture_dir("interposed") + "/" + winner) != std::string::npos);
    CHECK(message.find("dup_symbol") != std::string::npos);
  }
  CHECK(found == 1);
}

TEST_CASE("symbol-interposed: a library's own call of a function it exports goes to an earlier copy, unless -Bsymbolic") {
  LoaderRun loader = run_fixture("own_interposed", false, "");
  REQUIRE(loader.exit_code == 0);
  // libbundleb's call reached libbundlea's helper; libbundlebs (-Bsymbolic) kept its own
  CHECK(loader.output == case_value("own_interposed", "expect") + "\n");
  Prediction p = predict("own_interposed", false);
  std::istringstream expected(case_value("own_interposed", "interposed"));
  std::string winner, own;
  expected >> winner >> own;
  std::vector<std::string> messages;
  for (const json& f : p.doc["findings"])
    if (f["code"] == "symbol-interposed") messages.push_back(f["message"]);
  REQUIRE(messages.size() == 1);
  const std::string dir = fixture_dir("own_interposed");
  CHECK(messages[0] == dir + "/" + own + " calls or refers to 1 symbol of its own through the lookup scope, and " + dir +
                           "/" + winner + ", earlier in that scope, defines it too: those references bind to " + winner +
                           "'s: bundled_helper");
  // depscan symbol: libbundleb's own call is a use, bound to libbundlea; -Bsymbolic's makes none
  auto text = run_command(shell_quote(depscan_bin()) + " symbol bundled_helper " + shell_quote(dir + "/app"));
  CHECK_MESSAGE(text.output.find(dir + "/" + own + "  bundled_helper (its own definition) -> " + dir + "/" + winner) !=
                    std::string::npos,
                text.output);
  CHECK_MESSAGE(text.output.find("libbundlebs.so  bundled_helper (its own") == std::string::npos, text.output);
  // inspect: the PLT call behind it (-Bsymbolic's call needs none)
  for (const char* library : {"libbundleb.so", "libbundlebs.so"}) {
    CAPTURE(library);
    auto inspected = run_command(shell_quote(depscan_bin()) + " inspect --symbols --format json " + shell_quote(dir + "/" + library));
    json doc = json::parse(inspected.output);
    auto helper = std::ranges::find_if(doc["symbols"], [](const json& s) { return s["name"] == "bundled_helper"; });
    REQUIRE(helper != doc["symbols"].end());
    CHECK((*helper)["plt_called"] == (std::string(library) == "libbundleb.so"));
  }
}

TEST_CASE("symbol-interposed: a library's own TLS descriptor (-mtls-dialect=gnu2) binds at load to an earlier copy") {
  const std::string dir = fixture_dir("own_tls_interposed");
  // the loader's own account, relocating without running the program
  auto bindings = run_command("cd " + shell_quote(dir) + " && env -u LD_LIBRARY_PATH -u LD_PRELOAD -u LD_BIND_NOW "
                              "LD_DEBUG=bindings LD_TRACE_LOADED_OBJECTS=1 LD_WARN=yes ./app 2>&1");
  CHECK_MESSAGE(bindings.output.find("binding file " + dir + "/libtlsb.so [0] to " + dir + "/libtlsa.so [0]: normal symbol "
                                     "`bundled_tls'") != std::string::npos,
                bindings.output);
  LoaderRun loader = run_fixture("own_tls_interposed", false, "");
  CHECK(loader.output == case_value("own_tls_interposed", "expect") + "\n");  // libtlsb read libtlsa's copy
  Prediction p = predict("own_tls_interposed", false);
  std::vector<std::string> messages;
  for (const json& f : p.doc["findings"])
    if (f["code"] == "symbol-interposed") messages.push_back(f["message"]);
  REQUIRE(messages.size() == 1);
  CHECK(messages[0] == dir + "/libtlsb.so calls or refers to 1 symbol of its own through the lookup scope, and " + dir +
                           "/libtlsa.so, earlier in that scope, defines it too: those references bind to libtlsa.so's: "
                           "bundled_tls");
}

TEST_CASE("the text report shows the missing version, who needs it and who should provide it") {
  auto r = run_command(shell_quote(depscan_bin()) + " --no-color " + shell_quote(fixture_dir("version_missing") + "/app"));
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("error[symbol-version-not-found]: " + fixture_dir("version_missing") +
                      "/libver.so.1: version 'FOO_2' not found (required by " + fixture_dir("version_missing") +
                      "/app)") != std::string::npos);
  CHECK(r.output.find("uses FOO_2 for f2, f3") != std::string::npos);
  r = run_command(shell_quote(depscan_bin()) + " --no-color --bind-now " + shell_quote(fixture_dir("removed_versioned") + "/app"));
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("undefined symbol: bar_gone, version BAR_1 (expected from libbar.so.1 => " +
                      fixture_dir("removed_versioned") + "/libbar.so.1") != std::string::npos);
}

TEST_CASE("a dlopen of a filter: its filtee comes first in that dlopen's scope, as the program's output shows") {
  std::string dir = fixture_dir("dlopen_filter");
  auto run = run_command("cd " + shell_quote(dir) + " && env -u LD_LIBRARY_PATH ./app");
  REQUIRE(run.exit_code == 0);
  CHECK(run.output == "2\n");  // libfilteree.so's filter_value
  auto r = run_command(shell_quote(depscan_bin()) + " symbol --format json --matrix " + shell_quote(dir + "/dlopen.json") +
                       " filter_value " + shell_quote(dir + "/app"));
  REQUIRE(r.exit_code == 0);
  json doc = json::parse(r.output);
  REQUIRE(doc["roots"].size() == 1);
  const json& root = doc["roots"][0];
  REQUIRE(root["uses"].size() == 1);
  CHECK(root["uses"][0]["path"] == dir + "/libfilteruser.so");
  std::optional<json> bound;
  for (const json& d : root["definitions"])
    if (d["object"] == root["uses"][0]["binds_to"]) bound = d;
  REQUIRE(bound);
  CHECK((*bound)["path"] == dir + "/libfilteree.so");
}

TEST_CASE("depscan symbol: where a symbol is defined, which definition wins, who uses it") {
  auto r = run_command(shell_quote(depscan_bin()) + " symbol --format json dup_symbol " +
                       shell_quote(fixture_dir("interposed") + "/app"));
  REQUIRE(r.exit_code == 0);
  json doc = json::parse(r.output);
  REQUIRE(doc["roots"].size() == 1);
  const json& root = doc["roots"][0];
  REQUIRE(root["definitions"].size() == 2);
  CHECK(root["definitions"][0]["path"] == fixture_dir("interposed") + "/libfirst.so");
  CHECK(root["definitions"][0]["wins"] == true);
  CHECK(root["definitions"][1]["path"] == fixture_dir("interposed") + "/libsecond.so");
  CHECK(root["definitions"][1]["wins"] == false);
  REQUIRE(root["uses"].size() == 1);
  CHECK(root["uses"][0]["path"] == fixture_dir("interposed") + "/libuser.so");
  CHECK(root["uses"][0]["binds_to"] == root["definitions"][0]["object"]);

  CHECK(doc["errors"].empty());
  // an input that cannot be read: exit 2, and the JSON still comes, naming it
  r = run_command(shell_quote(depscan_bin()) + " symbol --format json dup_symbol /nonexistent " +
                  shell_quote(fixture_dir("interposed") + "/app") + " 2>/dev/null");
  CHECK(r.exit_code == 2);
  json with_error = json::parse(r.output);
  CHECK(with_error["errors"] == json::array({"/nonexistent: No such file or directory"}));
  CHECK(with_error["roots"].size() == 1);

  r = run_command(shell_quote(depscan_bin()) + " symbol f3 " + shell_quote(fixture_dir("versioned_ok") + "/app"));
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("f3@FOO_1") != std::string::npos);  // the hidden old version
  CHECK(r.output.find("f3@@FOO_2") != std::string::npos);  // the default
  CHECK(r.output.find("f3@FOO_2 from libver.so.1 -> " + fixture_dir("versioned_ok") + "/libver.so.1") != std::string::npos);

  r = run_command(shell_quote(depscan_bin()) + " symbol no_such_symbol_anywhere " + shell_quote(fixture_dir("versioned_ok") + "/app"));
  CHECK(r.exit_code == 1);
}

TEST_CASE("--target-glibc and --target name the symbols too new for the target") {
  std::string app = shell_quote(fixture_dir("removed_func") + "/app");
  // Built here against glibc 2.36: __libc_start_main@GLIBC_2.34 is in every program.
  auto r = run_command(shell_quote(depscan_bin()) + " --format json --target-glibc 2.30 " + app);
  CHECK(r.exit_code == 1);
  json doc = json::parse(r.output);
  bool named = false;
  for (const json& f : doc["findings"])
    if (f["code"] == "symbol-too-new")
      named = named || f["message"].get<std::string>().find("__libc_start_main") != std::string::npos;
  CHECK(named);
  r = run_command(shell_quote(depscan_bin()) + " --format json --target debian-12 " + app);
  CHECK(r.exit_code == 0);
  r = run_command(shell_quote(depscan_bin()) + " --target no-such-distro " + app + " 2>&1");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("known: debian-10") != std::string::npos);
  // a value that is no version would switch the check off: refused
  for (std::string option : {"--target-glibc GLIBC_2.17", "--target-glibc 2,17", "--target-glibcxx xyz", "--driver abc",
                             "--driver 550,54"}) {
    CAPTURE(option);
    r = run_command(shell_quote(depscan_bin()) + " " + option + " " + app + " 2>&1");
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("not a dotted version number") != std::string::npos);
  }
}
