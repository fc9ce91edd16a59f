// The command line: the scan's options and every subcommand, though a run builds only the
// subcommand it names (cli/main.cpp).
#include <doctest/doctest.h>

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
