// One entry point per parser, shared by the libFuzzer targets (tests/fuzz/fuzz_<name>.cpp) and
// the replay test (tests/fuzzreplay), which runs the committed corpus and every crash that was
// ever found through the same code in the normal and sanitizer builds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace depscan::fuzz {

using Entry = void (*)(const uint8_t* data, size_t size);

struct Target {
  std::string name;  // corpus directory name under tests/fuzz/corpus/
  Entry entry;
};

const std::vector<Target>& targets();

}  // namespace depscan::fuzz
