// Hostile inputs through the CLI ($DEPSCAN_BIN): each must give exactly one clear line naming the
// file (on stderr, or a parse-error / input-error finding), a non-zero exit (2 when the input
// cannot be read at all), no crash (exit < 128) and no hang (10 s each). The well-formed files
// corrupted here come from fixtures/hostile/build.sh.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>

#include "support.h"

namespace depscan::test {
namespace {
namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string victim(const char* name) {
  std::string bytes = read_file(fs::path(fixtures_dir()) / "hostile" / name);
  REQUIRE_MESSAGE(bytes.size() > 4096, "hostile fixture not built: " << name);
  return bytes;
}

std::string random_bytes(uint32_t seed, size_t size) {
  std::mt19937 rng(seed);
  std::string out(size, '\0');
  for (char& c : out) c = static_cast<char>(rng() & 0xff);
  return out;
}

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::vector<std::string> err_lines;
  nlohmann::json doc;
};

// `prefix` runs depscan as another user (setpriv ...) when not empty.
CliRun run_depscan(const std::vector<std::string>& inputs, const std::string& prefix = "") {
  TempDir tmp("hostile-run");
  std::string err_file = tmp.str() + "/stderr";
  std::string command = "timeout 10 " + prefix + shell_quote(fs::absolute(depscan_bin()).string()) +
                        " --format json";
  for (const std::string& input : inputs) command += " " + shell_quote(input);
  CommandResult r = run_command(command + " </dev/null 2>" + shell_quote(err_file));
  CliRun run;
  run.exit_code = r.exit_code;
  run.out = r.output;
  std::istringstream err(read_file(err_file));
  for (std::string line; std::getline(err, line);)
    if (!line.empty()) run.err_lines.push_back(line);
  run.doc = nlohmann::json::parse(r.output, nullptr, false);
  return run;
}

// A parse-error or input-error finding that names `path`.
bool finding_names(const CliRun& run, const std::string& path) {
  if (run.doc.is_discarded() || !run.doc.contains("findings")) return false;
  for (const auto& f : run.doc["findings"]) {
    std::string code = f.value("code", "");
    if (code != "parse-error" && code != "input-error") continue;
    if (f.value("message", "").find(path) != std::string::npos || f.value("path", "") == path) return true;
  }
  return false;
}

// No hang, no crash; when `must_fail`, a non-zero exit (exactly `exit_code` if given) and one
// clear line naming the file. Lenient inputs (a reader may tolerate them) must still give valid
// JSON when they succeed, and the same clear line when they fail.
void check_one(const std::string& label, const std::string& path, bool must_fail = true,
               int exit_code = 0, const std::string& prefix = "") {
  INFO("hostile input: " << label << " (" << path << ")");
  CliRun run = run_depscan({path}, prefix);
  REQUIRE_MESSAGE(run.exit_code != 124, "depscan hung (killed after 10 s)");
  CHECK_MESSAGE(run.exit_code < 128, "depscan crashed: exit " << run.exit_code);
  CHECK_MESSAGE(run.err_lines.size() <= 1, "more than one line on stderr: " << run.err_lines.size());
  if (!must_fail && run.exit_code == 0) {
    CHECK_MESSAGE(!run.doc.is_discarded(), "exit 0 without a JSON report");
    return;
  }
  CHECK_MESSAGE(run.exit_code != 0, "a hostile input was accepted (exit 0)");
  if (exit_code != 0) CHECK_MESSAGE(run.exit_code == exit_code, "exit " << run.exit_code);
  bool stderr_names = run.err_lines.size() == 1 && run.err_lines[0].find(path) != std::string::npos;
  CHECK_MESSAGE((stderr_names || finding_names(run, path)),
                "no line names the file; stderr: " << (run.err_lines.empty() ? "" : run.err_lines[0]));
}

// ELF64 little-endian field access on a byte string (fixtures are x86-64).
uint64_t get(const std::string& b, size_t off, int size) {
  uint64_t v = 0;
  for (int i = size - 1; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(b.at(off + i));
  return v;
}
void put(std::string& b, size_t off, int size, uint64_t v) {
  for (int i = 0; i < size; ++i) b.at(off + i) = static_cast<char>((v >> (8 * i)) & 0xff);
}

// Offset of the program header of type `type`, or 0.
size_t program_header(const std::string& b, uint32_t type) {
  uint64_t phoff = get(b, 32, 8), phnum = get(b, 56, 2);
  for (uint64_t i = 0; i < phnum; ++i)
    if (get(b, phoff + i * 56, 4) == type) return phoff + i * 56;
  return 0;
}

// Offset of the value field of the first dynamic entry with `tag`, or 0.
size_t dynamic_value(const std::string& b, uint64_t tag) {
  size_t ph = program_header(b, 2);
  if (!ph) return 0;
  uint64_t off = get(b, ph + 8, 8), size = get(b, ph + 32, 8);
  for (uint64_t at = off; at + 16 <= off + size; at += 16) {
    uint64_t t = get(b, at, 8);
    if (t == 0) break;
    if (t == tag) return at + 8;
  }
  return 0;
}

constexpr uint64_t kHuge = 0xfffffffffff00000ull;

struct Mutation {
  const char* label;
  bool must_fail;      // false: a tolerant reader may accept it
  void (*apply)(std::string&);
};

void set_dyn(std::string& b, uint64_t tag, uint64_t value) {
  size_t at = dynamic_value(b, tag);
  REQUIRE_MESSAGE(at != 0, "fixture lacks dynamic tag " << tag);
  put(b, at, 8, value);
}

const Mutation kMutations[] = {
    {"e_phoff huge", true, [](std::string& b) { put(b, 32, 8, kHuge); }},
    {"e_phnum 0xffff", true, [](std::string& b) { put(b, 56, 2, 0xffff); }},
    {"e_phentsize 1", true, [](std::string& b) { put(b, 54, 2, 1); }},
    {"e_shoff huge", true, [](std::string& b) { put(b, 40, 8, kHuge); }},
    {"e_shnum 0xffff", true, [](std::string& b) { put(b, 60, 2, 0xffff); }},
    {"e_shstrndx out of range", false, [](std::string& b) { put(b, 62, 2, 0xfefe); }},
    {"EI_CLASS invalid", true, [](std::string& b) { b[4] = 7; }},
    {"EI_DATA big-endian", false, [](std::string& b) { b[5] = 2; }},
    {"PT_DYNAMIC offset huge", true, [](std::string& b) { put(b, program_header(b, 2) + 8, 8, kHuge); }},
    {"PT_DYNAMIC size huge", false, [](std::string& b) { put(b, program_header(b, 2) + 32, 8, kHuge); }},
    {"DT_STRTAB huge", true, [](std::string& b) { set_dyn(b, 5, kHuge); }},
    {"DT_STRSZ huge", false, [](std::string& b) { set_dyn(b, 10, kHuge); }},
    {"DT_NEEDED offset huge", true, [](std::string& b) { set_dyn(b, 1, kHuge); }},
    {"DT_SONAME offset huge", true, [](std::string& b) { set_dyn(b, 14, kHuge); }},
    {"DT_RUNPATH offset huge", true, [](std::string& b) { set_dyn(b, 29, kHuge); }},
    {"DT_SYMTAB huge", true, [](std::string& b) { set_dyn(b, 6, kHuge); }},
    {"DT_GNU_HASH huge", false, [](std::string& b) { set_dyn(b, 0x6ffffef5, kHuge); }},
    {"DT_VERSYM huge", false, [](std::string& b) { set_dyn(b, 0x6ffffff0, kHuge); }},
    {"DT_VERNEED huge", true, [](std::string& b) { set_dyn(b, 0x6ffffffe, kHuge); }},
    {"DT_VERNEEDNUM huge", false, [](std::string& b) { set_dyn(b, 0x6fffffff, 0xffffffff); }},
    {"DT_VERDEF huge", true, [](std::string& b) { set_dyn(b, 0x6ffffffc, kHuge); }},
    {"DT_VERDEFNUM huge", false, [](std::string& b) { set_dyn(b, 0x6ffffffd, 0xffffffff); }},
    {"every section offset and size huge", false, [](std::string& b) {
       uint64_t shoff = get(b, 40, 8), shnum = get(b, 60, 2);
       for (uint64_t i = 1; i < shnum; ++i) {
         put(b, shoff + i * 64 + 24, 8, kHuge);
         put(b, shoff + i * 64 + 32, 8, kHuge);
       }
     }},
    {"every section name offset huge", false, [](std::string& b) {
       uint64_t shoff = get(b, 40, 8), shnum = get(b, 60, 2);
       for (uint64_t i = 0; i < shnum; ++i) put(b, shoff + i * 64, 4, 0xfffffff0);
     }},
};

}  // namespace

TEST_CASE("hostile: empty file") {
  TempDir dir("hostile-empty");
  std::string path = dir.str() + "/libempty.so";
  write_file(path, "");
  check_one("empty file", path, true, 2);
}

TEST_CASE("hostile: an ELF truncated at many offsets") {
  TempDir dir("hostile-trunc");
  for (const char* name : {"libvictim.so", "victim"}) {
    std::string bytes = victim(name);
    std::vector<size_t> cuts;
    for (size_t n = 1; n <= 72; ++n) cuts.push_back(n);                       // inside the header
    for (size_t n = 73; n < bytes.size(); n += 97) cuts.push_back(n);       // through the file
    cuts.push_back(bytes.size() - 1);
    for (size_t n : cuts) {
      std::string path = dir.str() + "/" + name + ".cut" + std::to_string(n);
      write_file(path, bytes.substr(0, n));
      check_one(std::string(name) + " truncated to " + std::to_string(n) + " bytes", path);
      fs::remove(path);
    }
  }
}

TEST_CASE("hostile: random bytes, ELF magic or MZ followed by garbage") {
  TempDir dir("hostile-random");
  const size_t sizes[] = {1, 3, 4, 5, 16, 63, 64, 65, 200, 4096, 65536};
  uint32_t seed = 1;
  for (size_t size : sizes) {
    std::string path = dir.str() + "/random" + std::to_string(size);
    write_file(path, random_bytes(seed++, size));
    check_one("random bytes", path);
    std::string elf = std::string("\177ELF") + random_bytes(seed++, size);
    write_file(path, elf);
    check_one("ELF magic + garbage", path);
    std::string elf64 = std::string("\177ELF\002\001\001") + random_bytes(seed++, size);
    write_file(path, elf64);
    check_one("ELF64 LE ident + garbage", path);
    std::string mz = std::string("MZ") + random_bytes(seed++, size);
    write_file(path, mz);
    check_one("MZ + garbage", path);
  }
}

TEST_CASE("hostile: huge counts and offsets in a real library") {
  TempDir dir("hostile-huge");
  std::string original = victim("libvictim.so");
  for (const Mutation& m : kMutations) {
    std::string bytes = original;
    m.apply(bytes);
    std::string path = dir.str() + "/libmutant.so";
    write_file(path, bytes);
    check_one(m.label, path, m.must_fail);
  }
}

TEST_CASE("hostile: symlink loops, a dangling symlink, a nonexistent path") {
  TempDir dir("hostile-links");
  fs::create_symlink("b.so", dir.path() / "a.so");
  fs::create_symlink("a.so", dir.path() / "b.so");
  fs::create_symlink("self.so", dir.path() / "self.so");
  fs::create_symlink("missing-target.so", dir.path() / "dangling.so");
  check_one("symlink loop", dir.str() + "/a.so", true, 2);
  check_one("self symlink", dir.str() + "/self.so", true, 2);
  check_one("dangling symlink", dir.str() + "/dangling.so", true, 2);
  check_one("nonexistent path", dir.str() + "/does-not-exist.so", true, 2);
}

TEST_CASE("hostile: a FIFO and character devices are refused without blocking") {
  TempDir dir("hostile-fifo");
  std::string fifo = dir.str() + "/libpipe.so";
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  check_one("FIFO", fifo, true, 2);
  check_one("/dev/zero", "/dev/zero", true, 2);
  check_one("/dev/null", "/dev/null", true, 2);
}

TEST_CASE("hostile: a directory where a file is expected (empty, nothing to analyse)") {
  TempDir dir("hostile-dir");
  fs::create_directories(dir.path() / "libdir.so");
  check_one("empty directory", dir.str() + "/libdir.so");
}

// root reads everything, so chmod 000 blocks nothing for it: as root the test drops to `nobody`
// with setpriv (a mode-000 file and a file inside a directory without x permission); without
// setpriv it says so and only the dangling symlink above covers unreadable input.
TEST_CASE("hostile: an unreadable file") {
  TempDir dir("hostile-perm");
  fs::permissions(dir.path(), fs::perms::all);  // others may enter the test directory itself
  std::string closed = dir.str() + "/libclosed.so";
  write_file(closed, victim("libvictim.so"));
  fs::permissions(closed, fs::perms::none);
  fs::create_directories(dir.path() / "locked");
  std::string hidden = dir.str() + "/locked/libhidden.so";
  write_file(hidden, victim("libvictim.so"));
  fs::permissions(dir.path() / "locked", fs::perms::owner_read | fs::perms::owner_write);
  struct Unlock {  // so TempDir can remove the tree afterwards, even as a non-root user
    fs::path locked;
    ~Unlock() { std::error_code ec; fs::permissions(locked, fs::perms::owner_all, ec); }
  } unlock{dir.path() / "locked"};
  std::string prefix;
  if (::geteuid() == 0) {
    std::string drop = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
    std::string bin = fs::absolute(depscan_bin()).string();
    if (run_command(drop + "test -x " + shell_quote(bin) + " && echo ok").output != "ok\n") {
      MESSAGE("running as root without a way to drop privileges: unreadable files not testable");
      return;
    }
    prefix = drop;
  }
  check_one("mode 000 file", closed, true, 2, prefix);
  if (::geteuid() == 0) check_one("file in a directory without x permission", hidden, true, 2, prefix);
  // a directory audit names what it cannot read, audits the rest, and fails
  write_file(dir.str() + "/libopen.so", victim("libvictim.so"));
  fs::create_directories(dir.path() / "listonly");  // others may list it, not enter it
  write_file(dir.str() + "/listonly/libinside.so", victim("libvictim.so"));
  fs::permissions(dir.path() / "listonly", fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
  fs::create_directories(dir.path() / "withlink");  // a link into what it may not enter, beside a library
  write_file(dir.str() + "/withlink/libbeside.so", victim("libvictim.so"));
  fs::create_symlink(dir.path() / "locked" / "libhidden.so", dir.path() / "withlink" / "zlink.so");
  auto walk = run_command(prefix + shell_quote(fs::absolute(depscan_bin()).string()) + " " + shell_quote(dir.str()) + " 2>&1");
  CHECK(walk.exit_code == 2);
  CHECK(walk.output.find("error[input-error]: " + closed + ": Permission denied: not audited") != std::string::npos);
  CHECK(walk.output.find(dir.str() + "/locked") != std::string::npos);
  if (!prefix.empty())  // as nobody: listed, not searchable
    CHECK(walk.output.find(dir.str() + "/listonly: cannot search the directory: Permission denied") != std::string::npos);
  CHECK(walk.output.find("2 ELF/PE files audited") != std::string::npos);  // libopen.so, withlink/libbeside.so
  CHECK(walk.output.find("withlink: ") == std::string::npos);
}

TEST_CASE("hostile: a scan of many files goes on past a bad one") {
  TempDir dir("hostile-many");
  std::string good = victim("libvictim.so");
  std::vector<std::string> inputs;
  for (int i = 0; i < 6; ++i) {
    std::string path = dir.str() + "/libgood" + std::to_string(i) + ".so";
    write_file(path, good);
    inputs.push_back(path);
  }
  std::string bad = dir.str() + "/libbad.so";
  write_file(bad, good.substr(0, 1000));
  inputs.insert(inputs.begin() + 3, bad);

  auto check_report = [&](const CliRun& run, const char* how) {
    INFO("scan of many files, " << how);
    REQUIRE_MESSAGE(run.exit_code != 124, "depscan hung");
    CHECK(run.exit_code < 128);
    CHECK(run.exit_code != 0);
    REQUIRE_MESSAGE(!run.doc.is_discarded(), "no JSON report");
    std::set<std::string> root_paths;
    for (const auto& r : run.doc["roots"]) root_paths.insert(run.doc["objects"].at(r.get<size_t>())["path"]);
    for (const std::string& input : inputs) {
      if (input == bad) continue;
      CHECK_MESSAGE(root_paths.count(input) == 1, input << " was not reported");
    }
    CHECK_MESSAGE(finding_names(run, bad), "the bad file has no parse-error/input-error finding");
  };
  check_report(run_depscan(inputs), "given one by one");
  check_report(run_depscan({dir.str()}), "given as a directory");
}

// ELF files the loader never loads: a relocatable object, a core dump, an unknown e_type. Given
// as inputs they are errors that say so (as libtree and ldd refuse them); in a directory they
// are skipped like any other file that is not a program or library.
TEST_CASE("hostile: ELF files that are not programs or libraries") {
  TempDir dir("hostile-not-loadable");
  std::string object = (fs::path(fixtures_dir()) / "hostile" / "victim.o").string();
  REQUIRE_MESSAGE(fs::exists(object), "hostile fixture not built: victim.o");
  std::string library = victim("libvictim.so");
  auto with_type = [&](const char* name, uint16_t type) {
    std::string bytes = library;
    put(bytes, 16, 2, type);
    std::string path = dir.str() + "/" + name;
    write_file(path, bytes);
    return path;
  };
  struct Case {
    std::string path, words;
  } cases[] = {{object, "relocatable object (ET_REL)"},
               {with_type("core", 4), "core dump (ET_CORE)"},
               {with_type("odd", 7), "type 7 (e_type)"}};
  for (const Case& c : cases) {
    CAPTURE(c.path);
    CliRun run = run_depscan({c.path});
    CHECK(run.exit_code == 2);
    REQUIRE(!run.doc.is_discarded());
    bool said = false;
    for (const auto& f : run.doc["findings"])
      said = said || (f["code"] == "input-error" && f["message"].get<std::string>().find(c.words) != std::string::npos &&
                      f["message"].get<std::string>().find(c.path) != std::string::npos);
    CHECK_MESSAGE(said, "no input-error saying " << c.words);
  }
  fs::copy_file(object, dir.str() + "/victim.o");
  write_file(dir.str() + "/libvictim.so", library);
  CliRun audit = run_depscan({dir.str()});
  CHECK(audit.exit_code < 2);
  std::set<std::string> roots;
  for (const auto& r : audit.doc["roots"]) roots.insert(audit.doc["objects"].at(r.get<size_t>())["path"]);
  CHECK(roots.count(dir.str() + "/libvictim.so") == 1);
  CHECK(roots.count(dir.str() + "/victim.o") == 0);
}

// A file name is any bytes; the JSON, SARIF and JUnit reports must stay valid UTF-8 (the JSON
// writer used to throw on the first invalid byte and the process ended in std::terminate).
TEST_CASE("hostile: a file name that is not UTF-8") {
  TempDir dir("hostile-utf8");
  std::string name = dir.str() + "/lib\xff\xfe" "bad\xc3.so";
  fs::copy_file("/bin/true", name);
  for (const char* format : {"json", "sarif"}) {
    CAPTURE(format);
    auto r = run_command("timeout 10 " + shell_quote(depscan_bin()) + " --format " + format + " " + shell_quote(dir.str()));
    CHECK(r.exit_code == 0);
    auto doc = nlohmann::json::parse(r.output, nullptr, false);
    REQUIRE_FALSE(doc.is_discarded());
    CHECK(r.output.find("lib\xef\xbf\xbd\xef\xbf\xbd" "bad\xef\xbf\xbd.so") != std::string::npos);  // U+FFFD per bad byte
  }
  auto junit = run_command("timeout 10 " + shell_quote(depscan_bin()) + " --format junit " + shell_quote(dir.str()));
  CHECK(junit.exit_code == 0);
  CHECK(junit.output.find("lib\xef\xbf\xbd\xef\xbf\xbd" "bad\xef\xbf\xbd.so") != std::string::npos);
  CHECK(junit.output.find("\xff") == std::string::npos);
}

TEST_CASE("hostile: a report that cannot be written (a full disk) is an error, not a pass") {
  TempDir dir("hostile-full");
  std::string path = dir.str() + "/libvictim.so";
  write_file(path, victim("libvictim.so"));
  for (const char* format : {"text", "json", "sarif"}) {
    INFO(format);
    auto r = run_command(depscan_bin() + " --format " + format + " " + shell_quote(path) + " 2>&1 >/dev/full");
    CHECK(r.exit_code == 2);
    CHECK(r.output == "depscan: error: cannot write the report to standard output: No space left on device\n");
  }
  CHECK(run_command(depscan_bin() + " matrix cudnn 9.19 >/dev/full 2>/dev/null").exit_code == 2);
  CHECK(run_command(depscan_bin() + " " + shell_quote(path) + " >/dev/null 2>&1").exit_code == 0);
}

TEST_CASE("hostile: no temporary directory for the wheels: each wheel is an input that cannot be analysed") {
  std::string wheel = fixtures_dir() + "/wheels/zipslip-1.0-py3-none-any.whl";
  auto r = run_command("TMPDIR=/nonexistent/tmp " + shell_quote(depscan_bin()) + " " + shell_quote(wheel) + " 2>&1 >/dev/null");
  CHECK(r.exit_code == 2);
  CHECK(r.output == "depscan: error: " + wheel + ": cannot create a temporary directory: No such file or directory\n");
}

}  // namespace depscan::test
