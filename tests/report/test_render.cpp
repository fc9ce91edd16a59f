#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "report/json_writer.h"
#include "report/report.h"
#include "report/summary.h"

using namespace depscan;
using nlohmann::json;

namespace {

// app -> libfoo.so.1 (runpath) -> libc.so.6 (ld.so.cache); app -> libmissing.so (not found)
ScanReport sample_report() {
  ScanReport r;
  Graph& g = r.result.graph;
  auto bin = [](const char* soname) {
    auto b = std::make_shared<Binary>();
    b->format = Format::Elf;
    b->bits = 64;
    if (soname) b->soname = soname;
    return b;
  };
  g.objects.push_back({"/opt/app/bin/app", "/opt/app/bin/app", bin(nullptr), "", 1, 1, ""});
  g.objects.push_back({"/opt/app/lib/libfoo.so.1", "/opt/app/lib/libfoo.so.1.2", bin("libfoo.so.1"), "", 1, 2, ""});
  g.objects.push_back({"/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6", bin("libc.so.6"), "", 1, 3, ""});
  g.roots = {0};
  g.load_order = {{0, 1, 2}};
  g.edges.push_back({0, "libfoo.so.1", 1, EdgeKind::Needed, How::Runpath, "", {{"/opt/app/lib/libfoo.so.1", "taken"}}, false, "", 0});
  g.edges.push_back({0, "libmissing.so", std::nullopt, EdgeKind::Needed, How::NotFound, "",
                     {{"/opt/app/lib/libmissing.so", "not found"}, {"/usr/lib/libmissing.so", "not found"}}, false, "", 0});
  g.edges.push_back({1, "libc.so.6", 2, EdgeKind::Needed, How::LdSoCache, "", {}, false, "", 0});
  r.result.findings.push_back({"library-not-found", Severity::Error, 0, "libmissing.so: cannot open shared object file",
                               "install it", ""});
  return r;
}

}  // namespace

TEST_CASE("JSON follows the depscan/1 contract") {
  json doc = json::parse(render_json(sample_report()));
  CHECK(doc["schema"] == "depscan/1");
  REQUIRE(doc["objects"].size() == 3);
  CHECK(doc["objects"][0]["soname"].is_null());
  CHECK(doc["objects"][1]["soname"] == "libfoo.so.1");
  CHECK(doc["objects"][1]["realpath"] == "/opt/app/lib/libfoo.so.1.2");
  CHECK(doc["objects"][1]["format"] == "elf");
  REQUIRE(doc["edges"].size() == 3);
  CHECK(doc["edges"][0]["from"] == 0);
  CHECK(doc["edges"][0]["to"] == 1);
  CHECK(doc["edges"][0]["kind"] == "needed");
  CHECK(doc["edges"][0]["how"] == "runpath");
  CHECK(doc["edges"][1]["to"].is_null());
  CHECK(doc["edges"][1]["how"] == "not_found");
  CHECK(doc["edges"][1]["tried"] == json::array({"/opt/app/lib/libmissing.so", "/usr/lib/libmissing.so"}));
  CHECK(doc["edges"][2]["how"] == "ld_so_cache");
  REQUIRE(doc["findings"].size() == 1);
  CHECK(doc["findings"][0]["code"] == "library-not-found");
  CHECK(doc["findings"][0]["severity"] == "error");
  CHECK(doc["findings"][0]["object"] == 0);
}

TEST_CASE("text tree says how each edge was found and folds libc unless verbose") {
  ScanReport r = sample_report();
  std::string plain = render_text(r, TextOptions{false, false});
  CHECK(plain.find("/opt/app/bin/app\n") == 0);
  CHECK(plain.find("libfoo.so.1 [runpath]") != std::string::npos);
  CHECK(plain.find("libmissing.so not found") != std::string::npos);
  CHECK(plain.find("tried /opt/app/lib/libmissing.so (not found)") != std::string::npos);
  CHECK(plain.find("libc.so.6") == std::string::npos);
  CHECK(plain.find("\033[") == std::string::npos);
  std::string verbose = render_text(r, TextOptions{false, true});
  CHECK(verbose.find("libc.so.6 [ld.so.cache]") != std::string::npos);
  std::string colored = render_text(r, TextOptions{true, false});
  CHECK(colored.find("\033[1;31mlibmissing.so not found") != std::string::npos);
  CHECK(plain.find("error[library-not-found]") != std::string::npos);
}

TEST_CASE("an edge found through another object's rpath, a preload or a DLL search shows its detail") {
  ScanReport r = sample_report();
  Graph& g = r.result.graph;
  // Details longer than a short string's inline buffer: a label that outlived a copy of one would
  // read freed heap memory (AddressSanitizer stops the test there).
  g.edges[0].how = How::Rpath;
  g.edges[0].how_detail = "rpath of libapplication-plugin-host.so.1";
  g.edges[2].how = How::Preload;
  g.edges[2].how_detail = "LD_PRELOAD (found through ld.so.cache)";
  std::string text = render_text(r, TextOptions{false, true});
  CHECK(text.find("libfoo.so.1 [rpath of libapplication-plugin-host.so.1]") != std::string::npos);
  CHECK(text.find("libc.so.6 [LD_PRELOAD (found through ld.so.cache)]") != std::string::npos);
  g.edges[0].how_detail.clear();
  g.edges[2].how = How::SearchOrder;
  g.edges[2].how_detail = "the application directory, then System32 (SafeDllSearchMode)";
  text = render_text(r, TextOptions{false, true});
  CHECK(text.find("libfoo.so.1 [rpath]") != std::string::npos);
  CHECK(text.find("libc.so.6 [the application directory, then System32 (SafeDllSearchMode)]") != std::string::npos);
}

TEST_CASE("SARIF, JUnit and GitHub renderings carry every finding") {
  ScanReport r = sample_report();
  json sarif = json::parse(render_sarif(r, "/home/ci/checkout"));
  CHECK(sarif["version"] == "2.1.0");
  auto& results = sarif["runs"][0]["results"];
  REQUIRE(results.size() == 1);
  CHECK(results[0]["ruleId"] == "library-not-found");
  CHECK(results[0]["level"] == "error");
  CHECK(results[0]["locations"][0]["physicalLocation"]["artifactLocation"] == json{{"uri", "file:///opt/app/bin/app"}});
  CHECK(sarif["runs"][0]["originalUriBaseIds"]["SRCROOT"]["uri"] == "file:///home/ci/checkout/");
  json in_checkout = json::parse(render_sarif(r, "/opt/app"))["runs"][0]["results"][0];  // relative to the checkout
  CHECK(in_checkout["locations"][0]["physicalLocation"]["artifactLocation"] == json{{"uri", "bin/app"}, {"uriBaseId", "SRCROOT"}});
  ScanReport odd_path = sample_report();
  odd_path.result.graph.objects[0].path = "/opt/my app/100%/caf\xc3\xa9:1";  // a URI reference, percent-encoded
  json odd = json::parse(render_sarif(odd_path, "/home/ci/checkout"))["runs"][0]["results"][0];
  CHECK(odd["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "file:///opt/my%20app/100%25/caf%C3%A9%3A1");

  std::string junit = render_junit(r);
  CHECK(junit.find("tests=\"1\" failures=\"1\"") != std::string::npos);
  CHECK(junit.find("<failure type=\"library-not-found\"") != std::string::npos);
  ScanReport two = sample_report();  // two errors on one file: one <failure>, naming both
  two.result.findings.push_back({"symbol-version-not-found", Severity::Error, 0, "GLIBC_2.99 not found", "rebuild", ""});
  junit = render_junit(two);
  size_t first = junit.find("<failure");
  CHECK(first != std::string::npos);
  CHECK(junit.find("<failure", first + 1) == std::string::npos);
  CHECK(junit.find("message=\"libmissing.so: cannot open shared object file (and 1 more error)\"") != std::string::npos);
  CHECK(junit.find("error[symbol-version-not-found]: GLIBC_2.99 not found\n  fix: rebuild") != std::string::npos);
  // below --fail-on: in the case's <system-out>, not a failure; at or above it: part of the failure
  ScanReport mixed = sample_report();
  mixed.result.findings.push_back({"symbol-interposed", Severity::Warning, 0, "two copies of libfoo", "load one", ""});
  mixed.result.findings.push_back({"directory-audited", Severity::Info, std::nullopt, "3 ELF files audited", "", "/opt/app"});
  junit = render_junit(mixed);
  CHECK(junit.find("tests=\"1\" failures=\"1\"") != std::string::npos);
  CHECK(junit.find("<system-out>warning[symbol-interposed]: two copies of libfoo\n  fix: load one\n</system-out>") != std::string::npos);
  CHECK(junit.find("  <system-out>info[directory-audited]: 3 ELF files audited\n</system-out>\n</testsuite>") != std::string::npos);
  junit = render_junit(mixed, Severity::Warning);
  CHECK(junit.find("(and 1 more finding)") != std::string::npos);
  CHECK(junit.find("warning[symbol-interposed]: two copies of libfoo\n  fix: load one\n</failure>") != std::string::npos);
  junit = render_junit(mixed, Severity::Info);
  CHECK(junit.find("tests=\"2\" failures=\"2\"") != std::string::npos);  // the scan-wide info is a case of its own
  CHECK(junit.find("<system-out>") == std::string::npos);
  ScanReport nonchar = sample_report();  // U+FFFE and U+FFFF are UTF-8 but not XML characters
  nonchar.result.graph.objects[0].path = "/opt/a\xef\xbf\xbe" "b\xef\xbf\xbf" "c<&";
  junit = render_junit(nonchar);
  CHECK(junit.find("\xef\xbf\xbe") == std::string::npos);
  CHECK(junit.find("\xef\xbf\xbf") == std::string::npos);
  CHECK(junit.find("/opt/a\xef\xbf\xbd" "b\xef\xbf\xbd" "c&lt;&amp;") != std::string::npos);

  r.result.findings[0].message = "line1\nline2 100%";
  std::string gh = render_github(r);
  CHECK(gh.rfind("::error file=/opt/app/bin/app,title=depscan library-not-found::", 0) == 0);
  CHECK(gh.find("line1%0Aline2 100%25") != std::string::npos);
  r.result.graph.objects[0].path = "/opt/a\xff" "b";  // not UTF-8: the log gets U+FFFD, as JSON does
  CHECK(render_github(r).rfind("::error file=/opt/a\xef\xbf\xbd" "b,", 0) == 0);
}

TEST_CASE("a missing name lists its tried paths once per tree, every time with -v") {
  ScanReport r = sample_report();
  Graph& g = r.result.graph;
  g.edges.push_back({1, "libmissing.so", std::nullopt, EdgeKind::Needed, How::NotFound, "",
                     {{"/opt/app/lib/libmissing.so", "not found"}}, false, "", 0});
  std::string plain = render_text(r, TextOptions{false, false});
  size_t first = plain.find("tried /opt/app/lib/libmissing.so");
  REQUIRE(first != std::string::npos);
  CHECK(plain.find("tried /opt/app/lib/libmissing.so", first + 1) == std::string::npos);
  CHECK(plain.find("libmissing.so not found (paths tried are listed above)") != std::string::npos);
  std::string verbose = render_text(r, TextOptions{false, true});
  first = verbose.find("tried /opt/app/lib/libmissing.so");
  CHECK(verbose.find("tried /opt/app/lib/libmissing.so", first + 1) != std::string::npos);
}

TEST_CASE("info findings of one code beyond three are counted in one line unless verbose") {
  ScanReport r = sample_report();
  for (int i = 0; i < 5; ++i)
    r.result.findings.push_back({"version-floor", Severity::Info, 0, "root " + std::to_string(i) + " needs glibc >= 2.17", "", ""});
  r.result.findings.push_back({"glibc-too-new", Severity::Warning, 0, "a warning after them", "", ""});
  std::string plain = render_text(r, TextOptions{false, false});
  CHECK(plain.find("root 2 needs") != std::string::npos);
  CHECK(plain.find("root 3 needs") == std::string::npos);
  CHECK(plain.find("info[version-floor]: 2 more like these") != std::string::npos);
  CHECK(plain.find("a warning after them") != std::string::npos);
  CHECK(plain.find("error[library-not-found]") != std::string::npos);
  std::string verbose = render_text(r, TextOptions{false, true});
  CHECK(verbose.find("root 4 needs") != std::string::npos);
  CHECK(verbose.find("more like these") == std::string::npos);
}

TEST_CASE("JsonWriter lays a document out exactly as nlohmann::json::dump(2)") {
  std::string tricky = std::string("quote \" backslash \\ tab \t newline \n bell \x07 nul ") + '\0' + " del \x7f caf\xc3\xa9";
  nlohmann::json expected = {{"a", tricky}, {"b", nlohmann::json::array()}, {"c", nlohmann::json::object()},
                             {"d", {1, 2, nullptr, true, false}}, {"e", {{"x", nlohmann::json::array({"y"})}}},
                             {"f", "/usr/local/cuda/lib64/libcudnn.so.9 del \x7f"}, {"g", "bad \xff\xc3 utf-8"}};
  depscan::JsonWriter w;
  w.begin_object();
  w.key("a");
  w.value(std::string_view(tricky));
  w.key("b");
  w.begin_array();
  w.end_array();
  w.key("c");
  w.begin_object();
  w.end_object();
  w.key("d");
  w.begin_array();
  w.value(uint64_t{1});
  w.value(uint64_t{2});
  w.null();
  w.value(true);
  w.value(false);
  w.end_array();
  w.key("e");
  w.raw_pretty(nlohmann::json({{"x", {"y"}}}).dump(2));
  w.key("f");
  w.value(std::string_view("/usr/local/cuda/lib64/libcudnn.so.9 del \x7f"));  // nothing to escape
  w.key("g");
  w.value(std::string_view("bad \xff\xc3 utf-8"));
  w.end_object();
  CHECK(w.take() == expected.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

TEST_CASE("terminal_safe shows control characters from the analysed files and keeps depscan's colours") {
  CHECK(terminal_safe("lib\033[2J\033[H.so.8\n\tx\x7f", false) == "lib\\x1b[2J\\x1b[H.so.8\n\tx\\x7f");
  CHECK(terminal_safe("\033[1;31merror\033[0m: l\033[2Jb", true) == "\033[1;31merror\033[0m: l\\x1b[2Jb");
  CHECK(terminal_safe("\033[31mred\033[0m", false) == "\\x1b[31mred\\x1b[0m");
  CHECK(terminal_safe("caf\xc3\xa9 \033", true) == "caf\xc3\xa9 \\x1b");
}

TEST_CASE("C1 controls are escaped too, and one_line escapes newlines, so a name cannot start a line") {
  CHECK(terminal_safe("x\xc2\x9b" "2Jy \xc2\xa0", false) == "x\\u009b2Jy \xc2\xa0");  // CSI escaped, NBSP kept
  CHECK(one_line("lib\nerror[fake]: x\r\t.so") == "lib\\x0aerror[fake]: x\\x0d\\x09.so");
}

TEST_CASE("bytes that are not UTF-8 and bidirectional controls are escaped, so a name cannot pass for another") {
  CHECK(one_line("lib\x9b" "2J.so") == "lib\\x9b2J.so");                    // a lone CSI byte
  CHECK(one_line("\xc3(\xe2\x82") == "\\xc3(\\xe2\\x82");                  // cut sequences
  CHECK(one_line("\xc0\xaf\xed\xa0\x80") == "\\xc0\\xaf\\xed\\xa0\\x80");  // overlong, surrogate
  CHECK(one_line("libcudnn\xe2\x80\xaeos.9") == "libcudnn\\u202eos.9");         // RIGHT-TO-LEFT OVERRIDE
  CHECK(one_line("a\xe2\x81\xa6" "b\xe2\x81\xa9" "c\xe2\x80\x8f" "d\xd8\x9c") == "a\\u2066b\\u2069c\\u200fd\\u061c");
  CHECK(one_line("lib\xe2\x80\x8bzw\xef\xbb\xbf.so\xe2\x80\xa8") == "lib\\u200bzw\\ufeff.so\\u2028");  // zero-width, BOM, LS
  CHECK(one_line("\xe2\x80\x94\xf0\x9f\x98\x80\xe4\xb8\xad") == "\xe2\x80\x94\xf0\x9f\x98\x80\xe4\xb8\xad");  // em dash, emoji, CJK kept
  ScanReport r = sample_report();
  r.result.graph.edges[1].name = "libmissing\xe2\x80\xae" "os.so";
  std::string text = render_text(r, TextOptions{true, true});
  CHECK(text.find("libmissing\\u202eos.so") != std::string::npos);
  CHECK(text.find("\xe2\x80\xae") == std::string::npos);
}

TEST_CASE("names and messages from the analysed files stay on their line in the text tree and findings") {
  ScanReport r = sample_report();
  r.result.graph.edges[1].name = "libmissing.so\nerror[fake]: all good\x1b[8m";
  r.result.graph.objects[1].path = "/opt/app/lib/lib\nfoo.so.1";
  r.result.findings[0].message = "libmissing.so\nerror[fake]: all good: cannot open shared object file";
  std::string text = render_text(r, TextOptions{true, true});
  CHECK(text.find("\nerror[fake]") == std::string::npos);
  CHECK(text.find("libmissing.so\\x0aerror[fake]: all good\\x1b[8m") != std::string::npos);
  CHECK(text.find("lib\\x0afoo.so.1") != std::string::npos);
  CHECK(text.find("\x1b[8m") == std::string::npos);
}

TEST_CASE("the summary counts a code's errors and warnings apart") {
  ScanReport r = sample_report();
  for (int i = 0; i < 10; ++i)
    r.result.findings.push_back({"library-not-found", Severity::Warning, 1, "libplugin" + std::to_string(i) + ".so: not found",
                                 "", ""});
  std::string summary = render_summary(r, false);
  CHECK(summary.find("1 errors, 10 warnings, 0 info") != std::string::npos);
  CHECK(summary.find("       1  error    library-not-found\n") != std::string::npos);
  CHECK(summary.find("      10  warning  library-not-found\n") != std::string::npos);
}
