// ld.so maps each PT_LOAD with the kernel's page size, and refuses an object whose segments do
// not fit it (elf/dl-load.c): "ELF load command address/offset not page-aligned" from glibc 2.35,
// before that also "ELF load command alignment not page-aligned" when p_align is not a multiple
// of the page. x86 has 4 KiB pages only, so only aarch64 and ppc64 objects (16 or 64 KiB) are checked.
#include <optional>

#include <fmt/format.h>

#include "analyzer/check/check.h"
#include "analyzer/check/per_file.h"
#include "analyzer/check/loader_releases.h"

namespace depscan {
namespace {

constexpr uint16_t kEmPpc64 = 21, kEmAarch64 = 183;
constexpr uint64_t kLargePage = 65536;
constexpr GlibcRelease kCongruenceOnly{2, 35};

bool may_have_large_pages(uint16_t machine) { return machine == kEmAarch64 || machine == kEmPpc64; }

std::string kib(uint64_t bytes) { return fmt::format("{} KiB", bytes / 1024); }

std::optional<Finding> page_size_finding(const CheckContext& ctx, LoaderReleases& releases, size_t index) {
  const Object& o = ctx.graph.objects[index];
  if (!o.binary || o.binary->format != Format::Elf || !o.binary->load_congruence) return std::nullopt;
  const Binary& b = *o.binary;
  if (!may_have_large_pages(b.machine)) return std::nullopt;  // x86 kernels have 4 KiB pages only
  std::optional<uint64_t> target = ctx.target.page_size;
  uint64_t page = target.value_or(kLargePage);
  const auto& release = releases.of_object(index);
  bool before_2_35 = release && *release < kCongruenceOnly;
  uint64_t largest = b.largest_page_size(before_2_35);
  if (largest >= page) return std::nullopt;
  std::string fits = largest ? fmt::format("its PT_LOAD segments fit pages of at most {}", kib(largest))
                             : std::string("its PT_LOAD segments fit no page size");
  std::string error = before_2_35 && b.load_alignment < page ? "ELF load command alignment not page-aligned"
                                                             : "ELF load command address/offset not page-aligned";
  std::string where = target ? fmt::format("the target's kernel uses {} pages (--page-size)", kib(page))
                             : fmt::format("kernels with {} pages (common on aarch64 servers such as NVIDIA Grace, and "
                                           "on ppc64le) refuse it; give the target's page size with --page-size",
                                           kib(page));
  return Finding{"page-size", target ? Severity::Error : Severity::Warning, index,
                 fmt::format("{}: {}: ld.so fails with \"{}\"; {}", o.path, fits, error, where),
                 "relink it with -Wl,-z,max-page-size=65536 (segments aligned for every page size up to 64 KiB)", ""};
}

}  // namespace

std::vector<Finding> check_page_size(const CheckContext& ctx) {
  LoaderReleases releases(ctx.graph);
  return once_per_file(ctx.graph, [&](size_t index) { return page_size_finding(ctx, releases, index); });
}

}  // namespace depscan
