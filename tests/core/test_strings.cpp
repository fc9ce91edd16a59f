// The soname-family helpers the matrix lookups and dlopen inference rely on.
#include <doctest/doctest.h>

#include "analyzer/util/strings.h"

using namespace depscan;

TEST_CASE("a dotted extension is the name, a dot, and more") {
  CHECK(is_dotted_extension_of("libcudnn.so.9", "libcudnn.so"));
  CHECK(is_dotted_extension_of("libcudnn.so.9.19.0", "libcudnn.so.9"));
  CHECK_FALSE(is_dotted_extension_of("libcudnn.so", "libcudnn.so"));
  CHECK_FALSE(is_dotted_extension_of("libcudnn.so.", "libcudnn.so.9"));
  CHECK_FALSE(is_dotted_extension_of("libcudnn_ops.so.9", "libcudnn"));
  CHECK_FALSE(is_dotted_extension_of("libcudnn.son", "libcudnn.so"));
  CHECK_FALSE(is_dotted_extension_of("", "libcudnn.so"));
  CHECK(is_dotted_extension_of(".", ""));
}

TEST_CASE("a name or its dotted extension") {
  CHECK(is_name_or_dotted_extension_of("libcublas.so", "libcublas.so"));
  CHECK(is_name_or_dotted_extension_of("libcublas.so.13", "libcublas.so"));
  CHECK_FALSE(is_name_or_dotted_extension_of("libcublasLt.so.13", "libcublas"));
  CHECK_FALSE(is_name_or_dotted_extension_of("libcublas.s", "libcublas.so"));
}
