#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>

// depscan takes --bind-now's default from LD_BIND_NOW, and the programs the tests run bind lazily
// unless a test sets it for one command: a caller's LD_BIND_NOW=1 (hardened CI) must not change
// what the tests expect.
int main(int argc, char** argv) {
  unsetenv("LD_BIND_NOW");
  return doctest::Context(argc, argv).run();
}
