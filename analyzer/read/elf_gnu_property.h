// The x86 ISA level an ELF object needs (GNU_PROPERTY_X86_ISA_1_NEEDED in its GNU property note).
#pragma once

#include "analyzer/model.h"
#include "analyzer/read/elf_image.h"

namespace depscan::elf {

// Sets binary.x86_isa_needed for x86-64 and i386 objects as ld.so reads the marker; other machines
// are left alone. A problem only when the note's bytes cannot be read.
std::optional<std::string> read_x86_isa_needed(const Image& image, Binary& binary);

}  // namespace depscan::elf
