#include "analyzer/resolve/musl_loader.h"

#include <algorithm>

#include "analyzer/resolve/system_layout.h"
#include "analyzer/util/strings.h"

namespace depscan {
namespace {

constexpr std::string_view kPrefix = "ld-musl-", kSuffix = ".so.1";
constexpr size_t kMaxPathFileBytes = size_t{1} << 20;

std::string musl_arch_of(const ProcessAbi& abi) {
  auto facts = machine_facts(abi);
  return facts ? std::string(facts->musl_arch) : std::string();
}

// The directory above the loader's own: "/usr/local/musl/lib/ld-musl-x86_64.so.1" -> "/usr/local/musl".
std::string prefix_of(const std::string& loader_path) {
  if (loader_path.empty() || loader_path[0] != '/') return "";
  size_t last = loader_path.rfind('/');
  if (last == 0 || last == std::string::npos) return "";
  size_t before = loader_path.rfind('/', last - 1);
  return loader_path.substr(0, before);
}

// As find_sym(dso, name, need_def=1) finds it: defined, of a value other than 0 unless
// thread-local, not local, not a hidden version, and of a type musl binds (not an IFUNC, which
// musl does not support).
bool defines_for_musl(const Binary& b, std::string_view name) {
  for (const Symbol& s : b.symbols)
    if (s.name == name && s.defined && !(s.no_value && s.type != SymbolType::Tls) && !s.hidden &&
        s.binding != SymbolBinding::Local &&
        s.binding != SymbolBinding::Other && s.type != SymbolType::GnuIfunc && s.type != SymbolType::Section &&
        s.type != SymbolType::File && s.type != SymbolType::Other)
      return true;
  return false;
}

}  // namespace

std::optional<std::string> musl_loader_arch(std::string_view loader_path) {
  std::string_view base = loader_path.substr(loader_path.rfind('/') + 1);
  if (!base.starts_with(kPrefix) || !base.ends_with(kSuffix) || base.size() <= kPrefix.size() + kSuffix.size())
    return std::nullopt;
  return std::string(base.substr(kPrefix.size(), base.size() - kPrefix.size() - kSuffix.size()));
}

std::vector<std::string> split_musl_path(std::string_view list) { return split_nonempty(list, ":\n"); }

MuslSearchPath musl_search_path(const FileSystem& fs, const std::string& loader_path) {
  MuslSearchPath out;
  auto arch = musl_loader_arch(loader_path);
  std::string file = prefix_of(loader_path) + "/etc/ld-musl-" + arch.value_or("") + ".path";
  auto text = fs.read_text(file, kMaxPathFileBytes);
  if (text) {
    text->resize(std::min(text->find('\0'), text->size()));  // musl reads up to the first NUL byte
    out.dirs = split_musl_path(*text);
    out.path_file = file;
  } else if (text.error().find("No such file or directory") == std::string::npos) {
    out.path_file = file;  // unreadable: musl searches no system directory at all
  } else {
    out.dirs = {"/lib", "/usr/local/lib", "/usr/lib"};
  }
  return out;
}

std::optional<std::string> expand_musl_origin(std::string list, const std::string& origin) {
  for (size_t at = list.find('$'); at != std::string::npos; at = list.find('$', at + origin.size())) {
    size_t length = list.compare(at, 7, "$ORIGIN") == 0 ? 7 : list.compare(at, 9, "${ORIGIN}") == 0 ? 9 : 0;
    if (length == 0) return std::nullopt;
    list.replace(at, length, origin);
  }
  return list;
}

bool is_musl_reserved_name(std::string_view name) {
  if (!name.starts_with("lib")) return false;
  for (std::string_view part : {"c.", "pthread.", "rt.", "m.", "dl.", "util.", "xnet."})
    if (name.substr(3).starts_with(part)) return true;
  return false;
}

bool is_second_c_library(const Binary& b) {
  return b.symbols_read && defines_for_musl(b, "__libc_start_main") && defines_for_musl(b, "stdin");
}

bool is_musl_libc_name(std::string_view needed) {
  return needed == "libc.so" || (needed.starts_with("libc.musl-") && needed.ends_with(".so.1"));
}

std::string musl_libc_needed(const Binary& b) {
  for (const std::string& name : b.needed)
    if (is_musl_libc_name(name)) return name;
  return "";
}

std::optional<std::string> musl_loader_path(const ProcessAbi& abi) {
  std::string arch = musl_arch_of(abi);
  if (arch.empty()) return std::nullopt;
  return "/lib/ld-musl-" + arch + ".so.1";
}

std::optional<std::string> musl_loader_of_root(const FileSystem& fs, const ProcessAbi& abi) {
  auto loader = musl_loader_path(abi);
  if (!loader || !fs.is_regular(*loader)) return std::nullopt;
  return loader;
}

std::optional<std::string> system_musl_loader(const FileSystem& fs, const ProcessAbi& abi) {
  if (fs.is_regular(default_interpreter(abi))) return std::nullopt;
  return musl_loader_of_root(fs, abi);
}

}  // namespace depscan
