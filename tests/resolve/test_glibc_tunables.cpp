// GLIBC_TUNABLES read as ld.so reads it (elf/dl-tunables.c). The surplus figures are checked against
// this machine's loader in tests/ldso/test_static_tls.cpp.
#include <doctest/doctest.h>

#include "analyzer/resolve/glibc_tunables.h"

namespace depscan {

TEST_CASE("glibc tunables: the static TLS surplus") {
  CHECK(parse_glibc_tunables("").static_tls_surplus() == 1664);  // the historic TLS_STATIC_SURPLUS
  CHECK(parse_glibc_tunables("glibc.rtld.optional_static_tls=0").static_tls_surplus() == 1152);
  CHECK(parse_glibc_tunables("glibc.rtld.optional_static_tls=4096").static_tls_surplus() == 5248);
  CHECK(parse_glibc_tunables("glibc.rtld.nns=1").static_tls_surplus() == 800);
  CHECK(parse_glibc_tunables("glibc.rtld.optional_static_tls=0x200:glibc.rtld.nns=016").static_tls_surplus() == 4544);
}

TEST_CASE("glibc tunables: execstack as written, for the caller to judge by release") {
  CHECK(parse_glibc_tunables("glibc.rtld.execstack=0").execstack == 0u);
  CHECK(parse_glibc_tunables("glibc.rtld.execstack=2:glibc.rtld.nns=2").execstack == 2u);
  CHECK(!parse_glibc_tunables("glibc.rtld.execstack=no").execstack);
  CHECK(!parse_glibc_tunables("").execstack);
}

TEST_CASE("glibc tunables: what ld.so ignores") {
  auto surplus = [](const char* text) { return parse_glibc_tunables(text).static_tls_surplus(); };
  CHECK(surplus("glibc.rtld.nns=17") == 1664);                                  // out of range
  CHECK(surplus("glibc.rtld.nns=0") == 1664);
  CHECK(surplus("glibc.rtld.optional_static_tls=12k") == 1664);                 // not a number
  CHECK(surplus("glibc.rtld.optional_static_tls") == 1664);                     // no value: the string is ignored
  CHECK(surplus("glibc.rtld.optional_static_tls=1=2") == 1664);                 // malformed: ignored whole
  CHECK(surplus("glibc.rtld.optional_static_tls=0:glibc.malloc.arena_max") == 1664);
  CHECK(surplus("glibc.malloc.arena_max:glibc.rtld.optional_static_tls=0") == 1152);  // a name alone is skipped
  CHECK(surplus("glibc.rtld.optional_static_tls=0:glibc.rtld.optional_static_tls=x") == 1664);  // the last counts
  CHECK(surplus("glibc.rtld.optional_static_tls=99999999999999999999999") == 1664);  // overflows: not a number
  CHECK(parse_glibc_tunables("glibc.rtld.optional_static_tls=18446744073709551615").optional_static_tls ==
        uint64_t{1} << 40);  // accepted, and kept from overflowing the sums
}

}  // namespace depscan
