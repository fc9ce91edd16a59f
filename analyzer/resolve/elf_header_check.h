// The checks glibc's open_verify (elf/dl-load.c) makes on a candidate file's ELF header before
// using it. Another class or machine: skipped, the search goes on. Anything else wrong (not ELF,
// other byte order, not ET_DYN/ET_EXEC, ...): the loader stops with that error.
#pragma once

#include <cstdint>
#include <string>

#include "analyzer/util/bytes.h"

namespace depscan {

struct ProcessAbi {
  int bits = 64;
  bool little_endian = true;
  uint16_t machine = 62;  // EM_X86_64
  auto operator<=>(const ProcessAbi&) const = default;
};

enum class HeaderVerdict { Fits, OtherClass, OtherMachine, Fatal };

struct HeaderCheck {
  HeaderVerdict verdict = HeaderVerdict::Fatal;
  std::string message;  // the loader's wording for Fatal; a short reason for skips
};

// `head` is the start of the file (at least 64 bytes when the file is that long).
HeaderCheck check_elf_header(ByteView head, const ProcessAbi& abi);

}  // namespace depscan
