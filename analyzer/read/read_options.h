// What a read keeps of a binary besides its dynamic-linking view.
#pragma once

namespace depscan {

struct ReadOptions {
  bool symbols = true;       // false: skip ELF dynamic symbol tables (--no-symbols)
  // false: of an ELF section table, keep only the sections a scan's checks read (.text for the
  // stub driver, .rodata for dlopen names); a CUDA library has 30 to 40 sections.
  bool all_sections = true;
};

}  // namespace depscan
