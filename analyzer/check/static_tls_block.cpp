#include "analyzer/check/static_tls_block.h"

#include <algorithm>

namespace depscan {
namespace {

constexpr uint64_t kRseqAreaSize = 32, kRseqAreaAlign = 32;  // RSEQ_AREA_SIZE_INITIAL, RSEQ_MIN_ALIGN

uint64_t round_up(uint64_t value, uint64_t to) { return to ? (value + to - 1) / to * to : value; }

}  // namespace

std::optional<TlsAbi> tls_abi(uint16_t machine) {
  constexpr uint16_t kI386 = 3, kPpc64 = 21, kX8664 = 62, kAarch64 = 183;
  switch (machine) {
    case kX8664:
    case kI386: return TlsAbi{true, 64, 0};
    case kAarch64: return TlsAbi{false, 32, 16};
    case kPpc64: return TlsAbi{false, 32, 0};
    default: return std::nullopt;
  }
}

StaticTlsBlock::StaticTlsBlock(TlsAbi abi, uint64_t surplus, bool rseq_area)
    : abi_(abi), surplus_(surplus), rseq_area_(rseq_area), offset_(abi.tcb_size_before_blocks),
      max_align_(abi.tcb_alignment) {}

void StaticTlsBlock::add_startup_block(const TlsBlockSpec& block) {
  if (block.size == 0) return;
  max_align_ = std::max(max_align_, block.align);
  if (abi_.blocks_below_thread_pointer) place_below(block);
  else place_above(block);
}

// TLS_TCB_AT_TP: blocks are laid out downwards from the thread pointer; a gap left by alignment
// takes a later block that fits.
void StaticTlsBlock::place_below(const TlsBlockSpec& b) {
  uint64_t align = std::max<uint64_t>(b.align, 1);
  uint64_t first_byte = (0 - b.first_byte) & (align - 1);
  if (free_bottom_ - free_top_ >= b.size) {
    uint64_t off = round_up(free_top_ + b.size - first_byte, align) + first_byte;
    if (off <= free_bottom_) {
      free_top_ = off;
      return;
    }
  }
  uint64_t off = round_up(offset_ + b.size - first_byte, align) + first_byte;
  if (off > offset_ + b.size + (free_bottom_ - free_top_)) {
    free_top_ = offset_;
    free_bottom_ = off - b.size;
  }
  offset_ = off;
}

// TLS_DTV_AT_TP: blocks follow the TCB upwards.
void StaticTlsBlock::place_above(const TlsBlockSpec& b) {
  uint64_t align = std::max<uint64_t>(b.align, 1);
  uint64_t first_byte = (0 - b.first_byte) & (align - 1);
  if (b.size <= free_top_ - free_bottom_) {
    uint64_t off = round_up(free_bottom_, align);
    if (off - free_bottom_ < first_byte) off += align;
    if (off + b.size - first_byte <= free_top_) {
      free_bottom_ = off + b.size - first_byte;
      return;
    }
  }
  uint64_t off = round_up(offset_, align);
  if (off - offset_ < first_byte) off += align;
  if (off - first_byte - offset_ > free_top_ - free_bottom_) {
    free_bottom_ = offset_;
    free_top_ = off - first_byte;
  }
  offset_ = off + b.size - first_byte;
}

void StaticTlsBlock::finish_startup() {
  if (rseq_area_) {
    max_align_ = std::max(max_align_, kRseqAreaAlign);
    offset_ = round_up(offset_, kRseqAreaAlign) + kRseqAreaSize;
  }
  used_ = offset_;
  limit_ = round_up(offset_ + surplus_, abi_.blocks_below_thread_pointer ? max_align_ : abi_.tcb_alignment);
}

StaticTlsBlock::Outcome StaticTlsBlock::allocate(const TlsBlockSpec& b) {
  uint64_t align = std::max<uint64_t>(b.align, 1);
  if (align > max_align_) return Outcome::OverAligned;
  if (abi_.blocks_below_thread_pointer) {
    uint64_t free = bytes_left(), needed = b.size + b.first_byte;
    if (needed < b.size || free < needed) return Outcome::TooLarge;
    uint64_t spare_alignments = (free - needed) / align;
    used_ += free - spare_alignments * align - b.first_byte;
    return Outcome::Placed;
  }
  if (used_ < b.first_byte) return Outcome::TooLarge;
  uint64_t offset = round_up(used_ - b.first_byte, align) + b.first_byte;
  uint64_t end = offset + b.size;
  if (end < offset || end > limit_) return Outcome::TooLarge;
  used_ = end;
  return Outcome::Placed;
}

}  // namespace depscan
