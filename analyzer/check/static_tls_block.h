// glibc's static TLS block: the thread-local storage of the objects loaded at start-up, laid out
// once per process (elf/dl-tls.c, _dl_determine_tlsoffset), plus a fixed surplus that libraries
// loaded later by dlopen draw from when initial-exec accesses need their TLS at a fixed offset
// (elf/dl-reloc.c, _dl_try_allocate_static_tls). The surplus is 1664 bytes by default in every
// release (TLS_STATIC_SURPLUS before 2.32, the rtld.nns and rtld.optional_static_tls tunables since).
#pragma once

#include <cstdint>
#include <optional>

namespace depscan {

struct TlsBlockSpec {   // one object's PT_TLS as ld.so keeps it
  uint64_t size = 0;    // p_memsz
  uint64_t align = 1;   // p_align
  uint64_t first_byte = 0;  // p_vaddr modulo p_align
};

// Where the ABI puts TLS blocks relative to the thread pointer (glibc's sysdeps/*/nptl/tls.h).
struct TlsAbi {
  bool blocks_below_thread_pointer = true;  // TLS_TCB_AT_TP (x86); else TLS_DTV_AT_TP
  uint64_t tcb_alignment = 64;              // TCB_ALIGNMENT
  uint64_t tcb_size_before_blocks = 0;      // TLS_TCB_SIZE when the blocks follow the TCB
};

// The ABI of an ELF machine, or nothing for one this model does not describe.
std::optional<TlsAbi> tls_abi(uint16_t machine);

class StaticTlsBlock {
 public:
  static constexpr uint64_t kDefaultSurplus = 1664;
  // `rseq_area`: glibc 2.41 and later place the 32-byte rseq area after the start-up blocks.
  StaticTlsBlock(TlsAbi abi, uint64_t surplus, bool rseq_area);

  void add_startup_block(const TlsBlockSpec& block);  // in load order, before finish_startup()
  void finish_startup();
  // Lets the block end `bytes` later: for a host program whose own start-up TLS is unknown.
  void widen(uint64_t bytes) { limit_ += bytes; }

  enum class Outcome { Placed, TooLarge, OverAligned };
  Outcome allocate(const TlsBlockSpec& block);  // what dlopen does for an initial-exec block
  uint64_t bytes_left() const { return limit_ > used_ ? limit_ - used_ : 0; }
  uint64_t alignment() const { return max_align_; }

 private:
  void place_below(const TlsBlockSpec& block);
  void place_above(const TlsBlockSpec& block);

  TlsAbi abi_;
  uint64_t surplus_;
  bool rseq_area_;
  uint64_t offset_ = 0, free_top_ = 0, free_bottom_ = 0;  // start-up layout, as dl-tls.c keeps it
  uint64_t max_align_;
  uint64_t used_ = 0, limit_ = 0;  // after start-up: bytes used, and where the surplus ends
};

}  // namespace depscan
