// Every case of the hostile corpus (fixtures/hostilecorpus, generated at test time) goes through
// the command line: depscan must exit with one of the documented codes (never a signal), within
// the case's time bound, below 1 GiB of peak memory, and say what is wrong in findings lines.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "support.h"

namespace {

struct Case {
  std::string name;
  std::vector<int> codes;
  double seconds = 10;
  std::vector<std::string> args;
};

std::vector<std::string> split(const std::string& line, char separator) {
  std::vector<std::string> parts;
  std::stringstream in(line);
  for (std::string part; std::getline(in, part, separator);) parts.push_back(part);
  return parts;
}

std::vector<Case> load_cases(const std::string& tsv) {
  std::vector<Case> cases;
  std::ifstream in(tsv);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> fields = split(line, '\t');
    if (fields.size() < 4) continue;
    Case c{fields[0], {}, std::stod(fields[2]), {fields.begin() + 3, fields.end()}};
    for (const std::string& code : split(fields[1], ',')) c.codes.push_back(std::stoi(code));
    cases.push_back(std::move(c));
  }
  return cases;
}

struct Outcome {
  bool timed_out = false;
  int status = 0;              // wait status
  double seconds = 0;
  long peak_rss_kib = 0;       // the child's own ru_maxrss (wait4)
  std::string output;          // stdout and stderr
};

Outcome run_case(const Case& c, const std::string& dir, const std::string& output_path) {
  std::vector<std::string> argv_strings = {depscan::test::depscan_bin(), "--no-color"};
  argv_strings.insert(argv_strings.end(), c.args.begin(), c.args.end());
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    int fd = ::open(output_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ::chdir(dir.c_str()) != 0) _exit(127);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::execv(argv[0], argv.data());
    _exit(127);
  }
  Outcome outcome;
  rusage usage{};
  // A hang, not a speed bound: three times the case's seconds (cases.tsv). The slowest case took
  // 2.7 to 5.1 s in the CI runs, most of that under AddressSanitizer.
  auto deadline = start + std::chrono::duration<double>(c.seconds * 3);
  while (::wait4(pid, &outcome.status, WNOHANG, &usage) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      outcome.timed_out = true;
      ::kill(pid, SIGKILL);
      ::wait4(pid, &outcome.status, 0, &usage);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  outcome.peak_rss_kib = usage.ru_maxrss;
  std::ifstream in(output_path, std::ios::binary);
  outcome.output.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return outcome;
}

bool has_finding_line(const std::string& output) {
  for (const std::string& line : split(output, '\n'))
    if (line.rfind("error[", 0) == 0 || line.rfind("warning[", 0) == 0 || line.rfind("info[", 0) == 0) return true;
  return false;
}

}  // namespace

TEST_CASE("hostile corpus: every case ends cleanly through the command line") {
  const std::string dir = depscan::test::fixtures_dir() + "/hostilecorpus";
  std::vector<Case> cases = load_cases(dir + "/cases.tsv");
  REQUIRE(cases.size() >= 50);
  depscan::test::TempDir scratch("hostilecorpus");
  const std::string output_path = (scratch.path() / "output").string();
  constexpr long kMemoryBoundKib = 1024 * 1024;
  double slowest = 0;
  long largest = 0;
  for (const Case& c : cases) {
    Outcome outcome = run_case(c, dir, output_path);
    INFO(c.name << ": " << outcome.output.substr(0, 2000));
    CHECK_FALSE(outcome.timed_out);
    REQUIRE(WIFEXITED(outcome.status));  // no signal: no crash, no abort
    int code = WEXITSTATUS(outcome.status);
    CHECK(std::find(c.codes.begin(), c.codes.end(), code) != c.codes.end());
    CHECK(outcome.peak_rss_kib < kMemoryBoundKib);
    // Exit 1 and 2 always come with a finding line saying what is wrong ("error[code]: file: ...").
    if (code != 0) CHECK(has_finding_line(outcome.output));
    CHECK(outcome.output.find("terminate called") == std::string::npos);
    CHECK(outcome.output.find("Sanitizer") == std::string::npos);
    CHECK(outcome.output.size() < (16u << 20));  // bounded output, whatever the depth of the graph
    slowest = std::max(slowest, outcome.seconds);
    largest = std::max(largest, outcome.peak_rss_kib);
  }
  MESSAGE(cases.size() << " hostile cases; slowest " << slowest << " s, largest peak RSS " << largest / 1024
                       << " MiB");
}
