#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "analyzer/read/rodata_strings.h"

using namespace depscan;

namespace {

template <size_t N>
std::string bytes_of(const char (&literal)[N]) {  // with the embedded NULs, without the final one
  return std::string(literal, N - 1);
}

std::vector<std::string> names_in(const std::string& text) {
  return library_names_in(ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

}  // namespace

TEST_CASE("library names are found at every offset of a block, in order, once each") {
  // The scanner compares 16 positions at a time: put the name at each position of a block and
  // next to decoys that share one or two of the bytes of ".so".
  for (size_t offset = 0; offset < 40; ++offset) {
    std::string text(offset, '.');
    text += bytes_of("\0libnvrtc.so.13\0.s\0o.so\0x.sx\0libcudnn.so.9\0libnvrtc.so.13\0");
    CAPTURE(offset);
    CHECK(names_in(text) == std::vector<std::string>{"libnvrtc.so.13", "libcudnn.so.9"});
  }
}

TEST_CASE("a library name that ends the data is found; a cut-off one is not") {
  for (size_t pad = 0; pad < 20; ++pad) {
    CAPTURE(pad);
    std::string text = std::string(pad, 'a') + bytes_of("\0libcuda.so\0");
    CHECK(names_in(text) == std::vector<std::string>{"libcuda.so"});
    CHECK(names_in(text.substr(0, text.size() - 1)).empty());  // no terminating NUL
    CHECK(names_in(text.substr(0, text.size() - 2)).empty());  // ".s" only
  }
}

TEST_CASE("XLA's stubs by their source paths: whole or tail-merged, once each, nothing else named _stub.cc") {
  std::string text = bytes_of("\0external/xla/xla/tsl/cuda/cudart_stub.cc\0/xla/tsl/cuda/cublasLt_stub.cc\0"
                              "xla/backends/gpu/codegen/triton/compilation_pipeline_oneapi_stub.cc\0"
                              "external/xla/xla/tsl/cuda/cudart_stub.cc\0tsl/cuda/cudnn_stub.cc.bak\0"
                              "tsl/cuda/not_a_stub.cc\0tsl/cuda/_stub.cc\0tsl/cuda/nccl_stub.cc");
  auto stubs = tsl_cuda_stubs_in(ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
  CHECK(stubs == std::vector<std::string>{"cudart", "cublasLt"});  // the last one has no NUL after it
}

TEST_CASE("the first whole string with a prefix, never the middle of a longer one") {
  auto first = [](const std::string& text, std::string_view prefix) {
    return first_string_with_prefix(ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size()), prefix);
  };
  std::string text = bytes_of("xlibnvrtc-builtins.so.13.9\0libnvrtc-builtins.so.13.0\0libnvrtc-builtins.so.13.1\0");
  CHECK(first(text, "libnvrtc-builtins.so.13.") == "libnvrtc-builtins.so.13.0");  // the first hit is inside "x..."
  CHECK(first(bytes_of("libfoo.so.1\0"), "libfoo.so.") == "libfoo.so.1");          // at offset 0
  CHECK_FALSE(first(bytes_of("\0libfoo.so.1"), "libfoo.so."));                    // no terminator: not a C string
  CHECK_FALSE(first(text, "libnvrtc-builtins.so.12."));
  CHECK_FALSE(first(text, ""));
}

TEST_CASE("the prefix search goes a megabyte at a time: a string across a boundary is found, and only "
          "what the search reaches is read ahead") {
  constexpr size_t kMiB = size_t{1} << 20;
  const std::string name = bytes_of("\0libnvrtc-builtins.so.13.0\0");
  // The prefix starts at the boundary (cut 1), one byte before it (2: the tightest window), inside.
  for (size_t cut : {size_t{1}, size_t{2}, size_t{5}, name.size() - 2}) {
    CAPTURE(cut);
    std::string text(kMiB - cut, 'x');
    text += name;
    text.resize(8 * kMiB, 'y');
    std::vector<std::pair<size_t, size_t>> asked;
    auto found = first_string_with_prefix(ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size()),
                                          "libnvrtc-builtins.so.13.",
                                          [&](size_t offset, size_t length) { asked.emplace_back(offset, length); });
    CHECK(found == "libnvrtc-builtins.so.13.0");
    REQUIRE_FALSE(asked.empty());
    size_t covered = 0;
    for (auto [offset, length] : asked) {
      CHECK(offset == covered);  // in order, no gap, nothing asked twice
      covered += length;
    }
    CHECK(covered >= 2 * kMiB);  // ahead of the search
    CHECK(covered <= 4 * kMiB);  // not the whole 8 MiB: the name is found in the first two
  }
}
