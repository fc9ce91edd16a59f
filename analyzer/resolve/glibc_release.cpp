#include "analyzer/resolve/glibc_release.h"

#if defined(__GLIBC__)
#include <gnu/libc-version.h>
#endif

#include <charconv>

#include <fmt/format.h>

#include "analyzer/resolve/system_layout.h"

namespace depscan {
namespace {

constexpr std::string_view kBanner = "release version ";
constexpr size_t kMaxLibraryBytes = size_t{16} << 20;  // libc.so.6 is about 2 MB

std::optional<int> leading_number(std::string_view text, size_t& at) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data() + at, text.data() + text.size(), value);
  if (ec != std::errc{} || end == text.data() + at) return std::nullopt;
  at = static_cast<size_t>(end - text.data());
  return value;
}

// "2.36" or "2.36.1" at the start of text.
std::optional<GlibcRelease> parse_release(std::string_view text) {
  size_t at = 0;
  auto major = leading_number(text, at);
  if (!major || at >= text.size() || text[at] != '.') return std::nullopt;
  ++at;
  auto minor = leading_number(text, at);
  if (!minor) return std::nullopt;
  return GlibcRelease{*major, *minor};
}

std::optional<GlibcRelease> release_in_file(const FileSystem& fs, const std::string& path) {
  auto bytes = fs.read_text(path, kMaxLibraryBytes);
  if (!bytes) return std::nullopt;
  return parse_release_banner(*bytes);
}

// The loader that started depscan is the analysed system's own when the root is "/".
bool is_own_loader(const FileSystem& fs, const std::string& interpreter) {
#if defined(__x86_64__) && defined(__GLIBC__)
  return fs.root() == "/" && interpreter == "/lib64/ld-linux-x86-64.so.2";
#else
  (void)fs;
  (void)interpreter;
  return false;
#endif
}

}  // namespace

std::optional<GlibcRelease> parse_release_banner(std::string_view bytes) {
  for (size_t at = bytes.find(kBanner); at != std::string_view::npos; at = bytes.find(kBanner, at + 1))
    if (auto release = parse_release(bytes.substr(at + kBanner.size()))) return release;
  return std::nullopt;
}

std::optional<GlibcRelease> glibc_release_of(const FileSystem& fs, const std::string& interpreter,
                                             const std::vector<std::string>& system_dirs) {
#if defined(__GLIBC__)
  if (is_own_loader(fs, interpreter)) return parse_release(gnu_get_libc_version());
#endif
  // ld.so before 2.33 has no banner; libc.so.6 beside it, or in a system directory, has.
  std::vector<std::string> libcs;
  if (auto canonical = fs.canonical(interpreter); !interpreter.empty() && canonical) {
    if (auto release = release_in_file(fs, *canonical)) return release;
    libcs.push_back(dirname_of(*canonical) + "/libc.so.6");
  }
  for (const std::string& dir : system_dirs) libcs.push_back(dir + "/libc.so.6");
  for (const std::string& libc : libcs)
    if (auto release = release_in_file(fs, libc)) return release;
  return std::nullopt;
}

HwcapRules hwcap_rules_for(std::optional<GlibcRelease> release) {
  HwcapRules rules;
  if (!release) return rules;
  rules.glibc_hwcaps = *release >= GlibcRelease{2, 33};
  rules.legacy_subdirs = *release < GlibcRelease{2, 37};
  rules.legacy_cache_entries = *release < GlibcRelease{2, 40};
  return rules;
}

std::string describe_hwcap_rules(std::optional<GlibcRelease> release, bool has_hwcaps_levels) {
  HwcapRules rules = hwcap_rules_for(release);
  std::string which = release ? fmt::format("glibc {}.{}", release->major, release->minor)
                              : std::string("glibc release unknown (taken as 2.36)");
  std::string hwcaps = !has_hwcaps_levels ? "no glibc-hwcaps subdirectories (none for this machine)"
                       : rules.glibc_hwcaps ? "glibc-hwcaps subdirectories"
                                            : "no glibc-hwcaps subdirectories (added in 2.33)";
  std::string legacy = rules.legacy_subdirs ? "legacy hwcap subdirectories" : "no legacy hwcap subdirectories (removed in 2.37)";
  std::string cache = rules.legacy_cache_entries ? "legacy ld.so.cache entries"
                                                 : "no legacy ld.so.cache entries (skipped from 2.40)";
  return fmt::format("{}: {}; {}; {}", which, hwcaps, legacy, cache);
}

}  // namespace depscan
