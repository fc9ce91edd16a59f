// libFuzzer entry: the target is chosen at build time by DEPSCAN_FUZZ_TARGET (its name).
#include <cstdlib>
#include <string>

#include "fuzz/fuzz_entries.h"

namespace {

depscan::fuzz::Entry chosen_entry() {
  for (const auto& target : depscan::fuzz::targets())
    if (target.name == DEPSCAN_FUZZ_TARGET) return target.entry;
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static depscan::fuzz::Entry entry = chosen_entry();
  entry(data, size);
  return 0;
}
