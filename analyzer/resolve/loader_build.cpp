#include "analyzer/resolve/loader_build.h"

#include <algorithm>

#include "analyzer/resolve/system_layout.h"

namespace depscan {
namespace {

constexpr size_t kMaxLoaderBytes = size_t{8} << 20;  // glibc's ld.so is about 250 KB
constexpr std::string_view kCacheName = "/ld.so.cache";
constexpr int kMaxRuns = 16;  // glibc's loaders have one or two; each costs a search of the file
constexpr size_t kMaxRunLength = 64;  // directories kept of one run (glibc's have at most a few)

bool is_directory_string(std::string_view s) {
  if (s.size() < 2 || s.front() != '/' || s.back() != '/') return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return c > ' ' && c < 127; });
}

bool is_cache_path(std::string_view s) {
  return s.size() > kCacheName.size() && s.front() == '/' && s.ends_with(kCacheName) &&
         std::all_of(s.begin(), s.end(), [](char c) { return c > ' ' && c < 127; });
}

// Walks the NUL-terminated strings of `bytes` in order (the bytes after the last NUL are left out).
class Strings {
 public:
  explicit Strings(std::string_view bytes) : bytes_(bytes) {}
  std::optional<std::string_view> next() {
    size_t nul = bytes_.find('\0', at_);
    if (nul == std::string_view::npos) return std::nullopt;
    std::string_view s = bytes_.substr(at_, nul - at_);
    at_ = nul + 1;
    return s;
  }

 private:
  std::string_view bytes_;
  size_t at_ = 0;
};

// The loader's own directory is one of its system directories when it is installed where it was
// built to be (/opt/glibc-2.35/lib/ld-linux-x86-64.so.2).
bool names_own_directory(const std::vector<std::string_view>& run, const std::vector<std::string>& own_dirs) {
  return std::any_of(run.begin(), run.end(), [&](std::string_view dir) {
    return std::find(own_dirs.begin(), own_dirs.end(), normalize_path(dir)) != own_dirs.end();
  });
}

// dl-load.c keeps the lengths of the system directories beside them (system_dirs_len, size_t):
// a copied loader, which lives elsewhere, is recognised by that table. The file's class and byte
// order come from its ELF header.
bool has_length_table(std::string_view bytes, const std::vector<std::string_view>& run) {
  if (bytes.size() < 6 || bytes.substr(0, 4) != "\x7f" "ELF") return false;
  size_t width = bytes[4] == 2 ? 8 : 4;
  bool little = bytes[5] == 1;
  std::string table;
  for (std::string_view dir : run)
    for (size_t k = 0; k < width; ++k) {
      size_t shift = 8 * (little ? k : width - 1 - k);
      table.push_back(static_cast<char>(shift < 64 ? (dir.size() >> shift) & 0xff : 0));
    }
  return bytes.find(table) != std::string_view::npos;
}

}  // namespace

std::optional<LoaderBuild> loader_build_in(std::string_view bytes, const std::vector<std::string>& own_dirs) {
  LoaderBuild build;
  Strings all(bytes);
  while (auto s = all.next())
    if (is_cache_path(*s)) {
      build.cache_path = normalize_path(*s);
      break;
    }
  Strings strings(bytes);
  std::vector<std::string_view> run;
  int runs = 0;
  for (std::optional<std::string_view> s = strings.next(); runs < kMaxRuns; s = strings.next()) {
    if (s && is_directory_string(*s)) {
      if (run.size() < kMaxRunLength) run.push_back(*s);
      continue;
    }
    if (!run.empty()) {
      ++runs;
      if (names_own_directory(run, own_dirs) || (run.size() >= 2 && has_length_table(bytes, run))) {
        for (std::string_view dir : run) build.system_dirs.push_back(normalize_path(dir));
        return build;
      }
      run.clear();
    }
    if (!s) break;
  }
  return std::nullopt;
}

std::optional<std::string> own_loader_path(const FileSystem& fs, const Binary& binary) {
  const std::string& interpreter = binary.interpreter;
  if (binary.format != Format::Elf || !binary.is_executable() || interpreter.empty() || interpreter[0] != '/')
    return std::nullopt;
  auto own = fs.stat(interpreter);
  if (!own || own->kind != FileKind::Regular) return std::nullopt;
  auto system = fs.stat(default_interpreter(process_abi_of(binary)));
  if (system && system->device == own->device && system->inode == own->inode) return std::nullopt;
  return interpreter;
}

std::optional<LoaderBuild> read_loader_build(const FileSystem& fs, const std::string& interpreter) {
  std::vector<std::string> own_dirs = {normalize_path(dirname_of(interpreter))};
  if (auto canonical = fs.canonical(interpreter)) own_dirs.push_back(normalize_path(dirname_of(*canonical)));
  auto bytes = fs.read_text(interpreter, kMaxLoaderBytes);
  if (!bytes) return std::nullopt;
  return loader_build_in(*bytes, own_dirs);
}

SystemLayout layout_for(const FileSystem& fs, const ProcessAbi& abi) {
  SystemLayout layout = detect_layout(fs, abi);
  if (abi == ProcessAbi{}) return layout;  // not read: every x86-64 scan would pay for it
  std::string interpreter = default_interpreter(abi);
  if (interpreter.empty() || !fs.is_regular(interpreter)) return layout;
  auto built = read_loader_build(fs, interpreter);
  if (!built || built->system_dirs.empty()) return layout;
  layout.kind = "loader";
  layout.system_dirs = built->system_dirs;
  layout.lib = built->system_dirs.front().substr(1);  // $LIB: lib32, lib64, lib/i386-linux-gnu
  return layout;
}

}  // namespace depscan
