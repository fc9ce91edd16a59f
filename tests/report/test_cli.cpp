// The command line: the scan's options and every subcommand, though a run builds only the
// subcommand it names (cli/main.cpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>

#include "support.h"

using namespace depscan::test;

TEST_CASE("depscan --help lists every subcommand, and each subcommand answers its own --help") {
  CommandResult help = run_command(shell_quote(depscan_bin()) + " --help 2>&1");
  CHECK(help.exit_code == 0);
  CHECK(help.output.find("--no-symbols") != std::string::npos);
  CHECK(help.output.find("--jobs") != std::string::npos);
  for (const char* sub : {"symbol", "why", "inspect", "matrix"}) {
    CAPTURE(sub);
    CHECK(help.output.find(std::string("\n  ") + sub + " ") != std::string::npos);
    CommandResult own = run_command(shell_quote(depscan_bin()) + " " + sub + " --help 2>&1");
    CHECK(own.exit_code == 0);
    CHECK(own.output.find(std::string("depscan ") + sub) != std::string::npos);
  }
  CHECK(help.output.find("__probe") == std::string::npos);  // internal: hidden
}

TEST_CASE("a misspelt option is a usage error, exit 2") {
  CommandResult r = run_command(shell_quote(depscan_bin()) + " --no-such-option /bin/true 2>&1");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("--no-such-option") != std::string::npos);
}

TEST_CASE("--root that is not a directory and --matrix that is not a file are usage errors, exit 2") {
  for (const char* args : {"--root /nonexistent /bin/true", "--root /etc/hostname /bin/true", "why --root /nonexistent /bin/true libc.so.6",
                           "--matrix /nonexistent /bin/true", "--matrix /etc /bin/true", "matrix --matrix /nonexistent"}) {
    CAPTURE(args);
    CommandResult r = run_command(shell_quote(depscan_bin()) + " " + args + " 2>&1 >/dev/null");
    CHECK(r.exit_code == 2);
    CHECK(r.output.find(std::string(args).find("--root") != std::string::npos ? "--root: " : "--matrix: ") != std::string::npos);
  }
}

TEST_CASE("an option's error quotes what was typed with its control characters escaped") {
  const std::string typed = "/x\x1b]0;title\x07";  // sets a terminal's title when printed raw
  for (const char* option : {"--root", "--matrix", "--target", "--gpu", "--driver", "--format", "--page-size"}) {
    CAPTURE(option);
    CommandResult r = run_command(shell_quote(depscan_bin()) + " " + option + " " + shell_quote(typed) + " /bin/true 2>&1");
    CHECK(r.exit_code == 2);
    CHECK(r.output.find(std::string(option) + ": ") == 0);
    CHECK(r.output.find("/x\\x1b]0;title\\x07") != std::string::npos);
    CHECK(r.output.find('\x1b') == std::string::npos);
  }
  CommandResult answer = run_command(shell_quote(depscan_bin()) + " matrix gpu " + shell_quote("\x1b[2J"));
  CHECK(answer.output == "\\x1b[2J: unknown GPU name\n");
  for (const std::string& misplaced : {"matrix " + shell_quote("--x" + typed), shell_quote("-" + typed) + " matrix cudnn 9"}) {
    CommandResult r = run_command(shell_quote(depscan_bin()) + " " + misplaced + " 2>&1");
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("\\x1b]0;title\\x07") != std::string::npos);
    CHECK(r.output.find('\x1b') == std::string::npos);
  }
  CommandResult page = run_command(shell_quote(depscan_bin()) + " --page-size abc /bin/true 2>&1");
  CHECK(page.output.find("--page-size: abc is not 4096, 16384 or 65536") == 0);
}

// On a terminal (script(1) gives the run one), a missing library is coloured unless NO_COLOR holds
// something or --no-color is given; an empty NO_COLOR does not count (no-color.org).
TEST_CASE("colour on a terminal follows NO_COLOR and --no-color") {
  std::string app = fixtures_dir() + "/ldso/missing/app";
  struct Case {
    const char* env;
    const char* flag;
    bool coloured;
  } cases[] = {{"-u NO_COLOR", "", true}, {"NO_COLOR=", "", true}, {"NO_COLOR=1", "", false}, {"-u NO_COLOR", "--no-color", false}};
  for (const Case& c : cases) {
    CAPTURE(c.env);
    CAPTURE(c.flag);
    std::string inner = "env " + std::string(c.env) + " " + shell_quote(depscan_bin()) + " " + c.flag + " " + shell_quote(app);
    CommandResult r = run_command("script -qec " + shell_quote(inner) + " /dev/null");
    CHECK(r.output.find("libmissing") != std::string::npos);
    CHECK((r.output.find("\033[") != std::string::npos) == c.coloured);
  }
  CommandResult piped = run_command("env -u NO_COLOR " + shell_quote(depscan_bin()) + " " + shell_quote(app));
  CHECK(piped.output.find("\033[") == std::string::npos);
}

TEST_CASE("an empty --opt= value is empty: the next argument stays an input") {
  CommandResult r = run_command(shell_quote(depscan_bin()) + " --format json --ld-library-path= /bin/true");
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("\"/bin/true\"") != std::string::npos);  // scanned, not taken for the path list
  CHECK(r.output.find("/bin/true/") == std::string::npos);
  CommandResult empty_version = run_command(shell_quote(depscan_bin()) + " --driver= /bin/true 2>&1");
  CHECK(empty_version.exit_code == 2);
  CHECK(empty_version.output.find("--driver: not a dotted version number: ''") != std::string::npos);
}

TEST_CASE("--fail-on decides both the exit code and which findings fail a JUnit test case") {
  CommandResult plain = run_command(shell_quote(depscan_bin()) + " --format junit /bin/true");
  CHECK(plain.exit_code == 0);
  CHECK(plain.output.find("failures=\"0\"") != std::string::npos);
  CHECK(plain.output.find("<system-out>info[version-floor]: /bin/true needs glibc") != std::string::npos);
  CommandResult strict = run_command(shell_quote(depscan_bin()) + " --format junit --fail-on info /bin/true");
  CHECK(strict.exit_code == 1);
  CHECK(strict.output.find("failures=\"1\"") != std::string::npos);
  CHECK(strict.output.find("<failure type=\"version-floor\"") != std::string::npos);
}

TEST_CASE("an input that cannot be analysed gets one stderr line with the reason, exit 2") {
  TempDir empty("cli-no-binaries"), other("cli-other-files"), pure("cli-pure-venv");
  std::string purelib = pure.str() + "/lib/python3.11/site-packages", platlib = pure.str() + "/lib64/python3.11/site-packages";
  std::filesystem::create_directories(purelib);
  std::filesystem::create_directories(platlib);
  std::ofstream(purelib + "/module.py") << "print()\n";
  std::string gzipped = other.str() + "/notes.txt.gz";
  REQUIRE(run_command("gzip -c /etc/hostname > " + shell_quote(gzipped)).exit_code == 0);
  std::string wheel = other.str() + "/rand-1.0-py3-none-any.whl";
  REQUIRE(run_command("head -c 3000 /dev/urandom > " + shell_quote(wheel)).exit_code == 0);
  struct Case {
    std::string args, line;
  } cases[] = {
      {"--format json " + shell_quote(empty.str()), empty.str() + ": no ELF or PE file in this directory (0 other files)"},
      {"--python-env /nonexistent/venv", "/nonexistent/venv: no such directory"},
      {"--python-env " + shell_quote(depscan_bin()), depscan_bin() + ": not a directory"},
      {"--python-env " + shell_quote(empty.str()), empty.str() + ": no lib/pythonX.Y/site-packages found"},
      {"--python-env " + shell_quote(pure.str()),  // one line for the environment, not one per directory
       pure.str() + ": no ELF file in its site-packages (" + platlib + ", " + purelib + "; 1 other files)"},
      // unpacked as an image: not a tar (archive-corrupt, whose finding names the archive's file name)
      {shell_quote(gzipped), gzipped + ": Unrecognized archive format"},
      {shell_quote(wheel), wheel + ": Unrecognized archive format (not a readable zip archive)"},
      {"symbol cudnnCreate /nonexistent/libx.so", "/nonexistent/libx.so: No such file or directory"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.args);
    CommandResult r = run_command(shell_quote(depscan_bin()) + " " + c.args + " 2>&1 >/dev/null");
    CHECK(r.exit_code == 2);
    CHECK_MESSAGE(r.output.starts_with("depscan: error: " + c.line), r.output);
    CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
  }
}

TEST_CASE("a Python environment's site-packages without binaries is no error when another of its directories has some") {
  TempDir venv("cli-split-venv");
  std::string purelib = venv.str() + "/lib/python3.11/site-packages", platlib = venv.str() + "/lib64/python3.11/site-packages";
  std::filesystem::create_directories(purelib);
  std::filesystem::create_directories(platlib + "/ext");
  std::ofstream(purelib + "/module.py") << "print()\n";
  std::filesystem::copy_file(fixtures_dir() + "/resolve/bfs/liba1.so", platlib + "/ext/liba1.so");
  CommandResult r = run_command(shell_quote(depscan_bin()) + " --python-env " + shell_quote(venv.str()) + " 2>&1");
  CHECK_MESSAGE(r.output.find("no ELF") == std::string::npos, r.output);
  CHECK_MESSAGE(r.output.find(purelib + ": 0 ELF/PE files audited, 1 other files skipped") != std::string::npos, r.output);
  CHECK(r.exit_code != 2);
}
