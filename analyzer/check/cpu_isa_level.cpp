// An x86 object can say in its GNU property note which ISA levels it needs (x86-64-v2, v3, v4:
// `-march=x86-64-v3 -mneeded`, `ld -z x86-64-v3`). glibc 2.33 and later compare that with the
// CPU before running any of its code (sysdeps/x86/dl-prop.h, dl_isa_level_check): a program, or a
// library it needs at start-up, stops the program with "<file>: CPU ISA level is lower than
// required" (exit 127); in a dlopen the same words come back from dlerror. Older releases load the
// object and the process dies later on the first instruction the CPU lacks (SIGILL).
#include <optional>

#include <fmt/format.h>

#include "analyzer/check/check.h"
#include "analyzer/util/listing.h"
#include "analyzer/check/per_file.h"
#include "analyzer/check/loader_releases.h"
#include "analyzer/resolve/hwcaps.h"

namespace depscan {
namespace {

constexpr GlibcRelease kChecksIsaLevel{2, 33};

std::string highest_level(uint32_t levels) {
  auto names = x86_isa_level_names(levels & (kIsaBaseline | kIsaV2 | kIsaV3 | kIsaV4));
  return names.empty() ? std::string("no x86-64 level") : names.back();
}

// ld.so is not checked: it would not have run at all.
bool is_dynamic_loader(const Binary& b) { return b.soname && b.soname->rfind("ld-linux", 0) == 0; }

// A file in glibc-hwcaps/x86-64-vN/ is only loaded on CPUs of that level.
bool in_unsearched_hwcaps_dir(const std::string& path, uint32_t levels) {
  static const std::string marker = "/glibc-hwcaps/";
  size_t at = path.rfind(marker);
  if (at == std::string::npos) return false;
  size_t start = at + marker.size(), end = path.find('/', start);
  if (end == std::string::npos) return false;
  auto dir_levels = parse_cpu_level(std::string_view(path).substr(start, end - start));
  return dir_levels && (*dir_levels & levels) != *dir_levels;
}

class IsaLevelCheck {
 public:
  explicit IsaLevelCheck(const CheckContext& ctx) : ctx_(ctx), releases_(ctx.graph) {}

  std::optional<Finding> finding_for(size_t index) {
    const Object& o = ctx_.graph.objects[index];
    if (!o.binary || o.binary->format != Format::Elf || !is_x86_machine(o.binary->machine)) return std::nullopt;
    uint32_t needed = o.binary->x86_isa_needed;
    if ((needed & ~kIsaBaseline) == 0) return std::nullopt;  // every x86-64 CPU has the baseline
    if ((needed & ~cpu_levels()) == 0 || is_dynamic_loader(*o.binary)) return std::nullopt;
    if (in_unsearched_hwcaps_dir(o.path, cpu_levels())) return std::nullopt;
    return Finding{"cpu-isa-level", Severity::Error, index, message(index, needed), fix(needed), ""};
  }

 private:
  std::string message(size_t index, uint32_t needed) {
    const Object& o = ctx_.graph.objects[index];
    const Binary& b = *o.binary;
    std::string cpu = ctx_.target.cpu_isa_levels ? "the target CPU (--cpu-level)" : "this machine's CPU";
    std::string what = fmt::format("{}: its GNU property note says it needs {}, which {} lacks (it supports up to {})",
                                   o.path, join_limited(x86_isa_level_names(needed & ~cpu_levels())), cpu,
                                   highest_level(cpu_levels()));
    if (releases_.musl_object(index))
      return fmt::format("{}: musl's loader loads it without looking, and the process dies with SIGILL (illegal "
                         "instruction) when it first runs an instruction the CPU lacks", what);
    const std::optional<GlibcRelease>& release = releases_.of_object(index);
    if (release && *release < kChecksIsaLevel)
      return fmt::format("{}: glibc {}.{} loads it without looking, and the process dies with SIGILL (illegal "
                         "instruction) when it first runs an instruction the CPU lacks", what, release->major,
                         release->minor);
    std::string effect = b.is_executable() && !b.soname ? "the program does not start"
                                                        : "a program that needs it does not start, a dlopen of it fails";
    return fmt::format("{}: ld.so refuses it with \"CPU ISA level is lower than required\": {}", what, effect);
  }

  std::string fix(uint32_t needed) {
    uint32_t missing = needed & ~cpu_levels();
    if (!(missing & (kIsaV2 | kIsaV3 | kIsaV4)))
      return "it names an ISA level no glibc knows, so no CPU loads it: relink it without that GNU property note";
    std::string cpu = highest_level(cpu_levels()), level = highest_level(missing);
    if (cpu == "x86-64-baseline") cpu = "x86-64";
    return fmt::format("rebuild it for the CPU (-march={}, no -Wl,-z,{}), or install this build in a glibc-hwcaps/{} "
                       "subdirectory beside one for older CPUs, which ld.so then picks by CPU; or run it only on CPUs "
                       "with {}", cpu, level, level, level);
  }

  uint32_t cpu_levels() {
    if (!levels_) levels_ = ctx_.cpu_isa_levels ? ctx_.cpu_isa_levels : detect_hwcaps().isa_levels;
    return *levels_;
  }

  const CheckContext& ctx_;
  LoaderReleases releases_;
  std::optional<uint32_t> levels_;
};

}  // namespace

std::vector<Finding> check_cpu_isa_level(const CheckContext& ctx) {
  IsaLevelCheck check(ctx);
  return once_per_file(ctx.graph, [&](size_t index) { return check.finding_for(index); });
}

}  // namespace depscan
