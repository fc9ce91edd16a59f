// A library (no PT_INTERP) loads only into a process whose loader matches its class and machine,
// and one linked against musl's C library only into a process of musl's loader. When the analysed
// system has no such loader (an aarch64 wheel scanned on x86-64, a 32-bit library without the
// 32-bit C library, a musllinux wheel on a glibc system without musl, a root file system without a
// C library), no process there can load it, and what it needs from the system is missing for that
// one reason.
#include <map>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "analyzer/check/check.h"
#include "analyzer/resolve/musl_loader.h"
#include "analyzer/resolve/system_layout.h"

namespace depscan {
namespace {

constexpr uint16_t kEtDyn = 3;
constexpr uint64_t kDf1Pie = 0x08000000;
constexpr size_t kFilesNamed = 3;

// What ld.so loads as a library: ET_DYN with a dynamic section, no PT_INTERP, not a static PIE
// (static programs, PIE or not, run without any loader).
bool is_shared_library(const Binary& b) {
  return b.file_type == kEtDyn && b.has_dynamic && b.interpreter.empty() && !(b.dt_flags_1 & kDf1Pie);
}

// "an x86-64", "an s390x", "a ppc64le": as the names are spoken.
std::string with_article(std::string_view label) {
  bool vowel_sound = !label.empty() && std::string_view("aeiosx").find(label[0]) != std::string_view::npos;
  return (vowel_sound ? "an " : "a ") + std::string(label);
}

bool has_loader(const FileSystem& fs, const ProcessAbi& abi) {
  return fs.is_regular(default_interpreter(abi)) || musl_loader_of_root(fs, abi).has_value();
}

std::string files_named(const Graph& g, const std::vector<size_t>& objects) {
  std::vector<std::string> named;
  for (size_t i = 0; i < objects.size() && i < kFilesNamed; ++i) named.push_back(g.objects[objects[i]].path);
  std::string more = objects.size() > kFilesNamed ? fmt::format(" and {} more", objects.size() - kFilesNamed) : "";
  return fmt::format("{}{}", fmt::join(named, ", "), more);
}

Finding no_loader(const Graph& g, const ProcessAbi& abi, const std::vector<size_t>& objects) {
  MachineFacts names = *machine_facts(abi);  // the caller skips kinds without a loader
  bool one = objects.size() == 1;
  return {"loader-missing", Severity::Error, objects.front(),
          fmt::format("{} built for {}, and the analysed system has no {} loader ({}): no process there can load {}, "
                      "which is also why the libraries {} from the system are not found ({})",
                      one ? "a library is" : fmt::format("{} libraries are", objects.size()), names.label, names.label,
                      default_interpreter(abi), one ? "it" : "them", one ? "it needs" : "they need",
                      files_named(g, objects)),
          fmt::format("audit {} against the target's root file system (--root DIR holding {} system) or on {} "
                      "machine; if {} meant to load here, install the {} C library (Debian: libc6:{})",
                      one ? "it" : "them", with_article(names.label), with_article(names.label),
                      one ? "it is" : "they are", names.label, names.debian),
          ""};
}

Finding no_musl_loader(const Graph& g, const std::string& loader, const std::vector<size_t>& objects) {
  bool one = objects.size() == 1;
  std::string libc = musl_libc_needed(*g.objects[objects.front()].binary);
  return {"loader-missing", Severity::Error, objects.front(),
          fmt::format("{} linked against musl's C library ({}), and the analysed system has no musl loader ({}): no "
                      "process there can load {}, which is also why {} is not found ({})",
                      one ? "a library is" : fmt::format("{} libraries are", objects.size()), libc, loader,
                      one ? "it" : "them", libc, files_named(g, objects)),
          fmt::format("audit {} against the target's root file system (--root DIR holding a musl system such as "
                      "Alpine), or use {} glibc (manylinux) build; to load {} here, install musl (Debian: musl)",
                      one ? "it" : "them", one ? "its" : "their", one ? "it" : "them"),
          ""};
}

struct LoaderKey {
  ProcessAbi abi;
  bool musl;  // linked against musl's C library: only musl's loader loads it
  auto operator<=>(const LoaderKey&) const = default;
};

}  // namespace

std::vector<Finding> check_library_loaders(const CheckContext& ctx) {
  std::map<LoaderKey, bool> loader_present;
  std::map<LoaderKey, std::vector<size_t>> without;
  for (size_t object : ctx.graph.roots) {
    const Object& o = ctx.graph.objects[object];
    if (!o.binary || o.binary->format != Format::Elf || !is_shared_library(*o.binary)) continue;
    const Binary& b = *o.binary;
    LoaderKey key{process_abi_of(b), !musl_libc_needed(b).empty()};
    // a machine whose loader depscan does not know
    if (key.musl ? !musl_loader_path(key.abi) : default_interpreter(key.abi).empty()) continue;
    auto [it, fresh] = loader_present.try_emplace(key);
    if (fresh) it->second = key.musl ? musl_loader_of_root(ctx.fs, key.abi).has_value() : has_loader(ctx.fs, key.abi);
    if (!it->second) without[key].push_back(object);
  }
  std::vector<Finding> out;
  for (const auto& [key, objects] : without)
    out.push_back(key.musl ? no_musl_loader(ctx.graph, *musl_loader_path(key.abi), objects)
                           : no_loader(ctx.graph, key.abi, objects));
  return out;
}

}  // namespace depscan
