// read_pe and read_elf_with_lief: forwarded to libdepscan-lief.so (see lief/lief_readers.h),
// looked for next to the running program, in ../lib/depscan beside it, then in the build tree.
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <optional>

#include <fmt/format.h>

#include "analyzer/read/lief/lief_readers.h"
#include "analyzer/read/lief_elf_reader.h"
#include "analyzer/read/pe_reader.h"

namespace depscan {
namespace {

constexpr const char* kModuleName = "libdepscan-lief.so";

std::string running_program_dir() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  std::string exe(buf, static_cast<size_t>(n));
  return exe.substr(0, exe.rfind('/'));
}

std::vector<std::string> module_candidates() {
  std::vector<std::string> dirs;
  if (std::string dir = running_program_dir(); !dir.empty()) {
    dirs.push_back(dir);
    dirs.push_back(dir + "/../lib/depscan");
  }
#ifdef DEPSCAN_BUILD_MODULE_DIR
  if (std::find(dirs.begin(), dirs.end(), DEPSCAN_BUILD_MODULE_DIR) == dirs.end())
    dirs.push_back(DEPSCAN_BUILD_MODULE_DIR);  // tests and fuzzers run from other build folders
#endif
  for (std::string& d : dirs) d += std::string("/") + kModuleName;
  return dirs;
}

Expected<const LiefReaders*> load() {
  std::string tried;
  for (const std::string& path : module_candidates()) {
    if (::access(path.c_str(), F_OK) != 0) {
      tried += fmt::format("{}{}", tried.empty() ? "" : ", ", path);
      continue;
    }
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = ::dlerror();
      return Error{fmt::format("PE and deep reads need {}, which did not load: {}", path, why ? why : "dlopen failed")};
    }
    auto entry = reinterpret_cast<const LiefReaders* (*)()>(::dlsym(handle, "depscan_lief_readers"));
    const LiefReaders* readers = entry ? entry() : nullptr;
    if (!readers || readers->abi != kLiefReadersAbi)
      return Error{fmt::format("{} belongs to another depscan build: rebuild or reinstall depscan", path)};
    return readers;
  }
  return Error{fmt::format("PE and deep reads need {}; not found (looked for {})", kModuleName, tried)};
}

Expected<const LiefReaders*> lief_readers() {
  static const Expected<const LiefReaders*> loaded = load();
  return loaded;
}

// LIEF 0.9 reads a whole file into memory, about three copies of it: a (sparse) file of tens of
// gigabytes would exhaust the machine. No PE file is this large, nor any real CUDA library.
constexpr uint64_t kMaxLiefBytes = 4ull << 30;

std::optional<Error> too_large_for_lief(const std::string& host_path) {
  struct stat st;
  if (::stat(host_path.c_str(), &st) != 0 || static_cast<uint64_t>(st.st_size) <= kMaxLiefBytes) return std::nullopt;
  return Error{fmt::format("{:.1f} GiB, larger than the {} GiB LIEF reads in full (depscan FILE reads its dependencies "
                           "without LIEF)", static_cast<double>(st.st_size) / (1ull << 30), kMaxLiefBytes >> 30)};
}

}  // namespace

Expected<Binary> read_pe(const std::string& host_path, const std::string& logical_path) {
  if (auto refused = too_large_for_lief(host_path)) return *refused;
  auto readers = lief_readers();
  if (!readers) return Error{readers.error()};
  return (*readers)->read_pe(host_path, logical_path);
}

Expected<Binary> read_elf_with_lief(const std::string& host_path, const std::string& logical_path) {
  if (auto refused = too_large_for_lief(host_path)) return *refused;
  auto readers = lief_readers();
  if (!readers) return Error{readers.error()};
  return (*readers)->read_elf(host_path, logical_path);
}

}  // namespace depscan
