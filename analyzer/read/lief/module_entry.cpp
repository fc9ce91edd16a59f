#include "analyzer/read/lief/lief_readers.h"

extern "C" __attribute__((visibility("default"))) const depscan::LiefReaders* depscan_lief_readers() {
  static const depscan::LiefReaders readers{depscan::kLiefReadersAbi, &depscan::parse_pe_with_lief,
                                            &depscan::parse_elf_with_lief};
  return &readers;
}
