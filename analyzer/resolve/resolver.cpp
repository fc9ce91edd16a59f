// The graph walk: for each root, the objects glibc's ld.so loads, breadth-first, in the order
// that is also the lookup scope (elf/rtld.c dl_main, elf/dl-deps.c _dl_map_object_deps), and
// for each request the "already loaded" check, the loader-chain RPATHs and the search itself
// (search.cpp). No recursion: each root walk is a queue, each RPATH chain a loop.
#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analyzer/resolve/dst.h"
#include "analyzer/resolve/glibc_release.h"
#include "analyzer/resolve/hwcaps.h"
#include "analyzer/resolve/ld_so_cache.h"
#include "analyzer/resolve/ld_so_conf.h"
#include "analyzer/resolve/loader_build.h"
#include "analyzer/resolve/musl_loader.h"
#include "analyzer/resolve/pe_search.h"
#include "analyzer/resolve/resolve.h"
#include "analyzer/resolve/search.h"
#include "analyzer/resolve/system_layout.h"
#include "analyzer/util/string_map.h"
#include "analyzer/util/strings.h"

namespace depscan {
namespace {

constexpr uint16_t kEtExec = 2, kEm386 = 3, kEmX8664 = 62;
constexpr size_t kNone = static_cast<size_t>(-1);
constexpr const char* kCachePath = "/etc/ld.so.cache";
constexpr const char* kPreloadPath = "/etc/ld.so.preload";

std::string display_name(const Object& obj) {
  if (obj.binary && obj.binary->soname) return *obj.binary->soname;
  return basename_of(obj.path);
}

// The loader of one ABI (class, byte order, machine) on the analysed root: the system's, or a
// program's own (another glibc's ld.so in its PT_INTERP).
struct AbiContext {
  SystemLayout layout;
  std::string platform;                 // $PLATFORM (AT_PLATFORM) of a process of this ABI
  std::optional<GlibcRelease> release;  // the glibc release of the loader this context searches like
  bool musl = false;                    // musl's loader: its rules (musl_loader.h), not glibc's
  std::unique_ptr<LibrarySearch> search;
};

// One object as loaded within one root walk.
struct Loaded {
  size_t object = 0;           // index into Graph::objects
  size_t loader = kNone;       // Loaded index of l_loader (kNone for roots, dlopen, interpreter)
  size_t rpath_anchor = kNone; // nearest Loaded at or above this one, on the loader chain, with RPATH
  bool in_scope = false;       // appended to the root's load order
};

struct RootWalk {
  size_t root_object = 0;
  AbiContext* abi = nullptr;
  std::optional<OwnLoader> own_loader;  // the program's own loader, when it runs under one
  ProcessAbi process;
  bool pe = false;
  size_t main = kNone;         // Loaded index of the main program; kNone for library roots
  size_t interpreter = kNone;  // Loaded index of the dynamic loader, when it is in the walk
  std::vector<Loaded> loaded;
  StringMap<size_t> names;     // soname / requested name / path -> Loaded
  std::map<std::pair<uint64_t, uint64_t>, size_t> files;  // (device, inode) -> Loaded
  std::unordered_map<size_t, size_t> by_object;  // object index -> Loaded
  std::vector<size_t> queue;   // BFS order of Loaded indexes whose NEEDED are processed
  size_t next = 0;             // next queue position to process
};

// A request for one name, before resolution.
struct Request {
  std::string_view name;       // as written (NEEDED, preload entry, dlopen argument); outlives the request
  EdgeKind kind = EdgeKind::Needed;
  size_t requester = kNone;    // Loaded index of the object asking (its RPATH/RUNPATH apply)
  bool expand_bare_names = true;  // NEEDED: DSTs expanded even without '/'
  bool dlopen = false;         // the new object gets no l_loader (__RTLD_CALLMAP)
  std::string_view loaded_by;  // a preload's "LD_PRELOAD" / "/etc/ld.so.preload"; a Python package (loaded_first)
};

}  // namespace

struct Resolver::Impl {
  BinaryCache& cache;
  ResolveOptions options;
  const FileSystem& fs;
  Graph graph;
  std::vector<Finding> diagnostics;
  std::vector<RootWalk> walks;
  StringMap<size_t> object_by_path;
  std::map<std::tuple<int, bool, uint16_t, bool, std::string>, std::unique_ptr<AbiContext>> abis;  // PE; own loader
  std::map<std::string, std::optional<LoaderBuild>> loader_builds;  // by own loader path
  std::map<std::string, std::optional<LdSoCache>> own_loader_caches;  // by cache path
  std::map<ProcessAbi, std::optional<std::string>> system_musl_loaders;
  std::map<ProcessAbi, std::optional<std::string>> root_musl_loaders;
  std::map<std::string, MuslSearchPath> musl_search_paths;                              // by loader path
  std::map<std::string, bool> second_c_libraries;  // is_second_c_library, by path
  std::unique_ptr<DirCache> dir_cache;
  bool cache_loaded = false;
  std::optional<LdSoCache> ld_cache;
  LdSoConf conf;
  // Search lists, expanded once and kept for the scan, one copy of each distinct list (LibrarySearch
  // remembers answers by list: libraries in one directory share a RUNPATH of $ORIGIN).
  std::set<std::vector<std::string>> search_lists;
  std::map<std::pair<size_t, bool>, const std::vector<std::string>*> rpath_memo, runpath_memo, musl_rpath_memo;
  const std::vector<std::string>* musl_ld_library_path = nullptr;  // split once, on first use
  std::map<std::pair<size_t, const AbiContext*>, const std::vector<std::string>*> ld_library_path_memo;
  std::optional<std::vector<std::string>> etc_preload;
  std::set<std::string> preload_failures_said;  // preload-not-loaded messages already given
  bool dry_run = false;  // explain(): search without loading or naming anything in the walk
  mutable std::optional<WindowsDllLists> windows_lists;
  std::unordered_map<size_t, std::vector<std::pair<std::string, AttemptList>>> already_loaded_lists;  // by object

  Impl(BinaryCache& c, ResolveOptions o)
      : cache(c), options(std::move(o)), fs(c.fs()), dir_cache(std::make_unique<DirCache>(c.fs())) {}

  const LoaderEnvironment& env() const { return options.env; }

  // ---------------------------------------------------------------- set-up per run / ABI

  void load_cache_once() {
    if (cache_loaded) return;
    cache_loaded = true;
    auto text = fs.read_text(kCachePath, size_t{256} << 20);
    if (text) {
      auto parsed = LdSoCache::parse(std::move(*text));
      if (parsed) {
        ld_cache = std::move(*parsed);
        return;
      }
      diagnostics.push_back({"ld-so-cache-error", Severity::Warning, std::nullopt,
                             fmt::format("{}: {}; using the directories of /etc/ld.so.conf instead",
                                         kCachePath, parsed.error()),
                             "run ldconfig in the analysed system", kCachePath});
    } else {
      diagnostics.push_back({"no-ld-so-cache", Severity::Warning, std::nullopt,
                             fmt::format("{}: {}; using the directories of /etc/ld.so.conf as "
                                         "ldconfig would (the loader itself would not search them)",
                                         kCachePath, text.error()),
                             "run ldconfig in the analysed system", kCachePath});
    }
    conf = read_ld_so_conf(fs);
  }

  // The ld.so.cache a program's own loader reads; null when the file is absent (that loader then
  // searches its directories only; ld.so.conf is ldconfig's, never the loader's) or damaged.
  const LdSoCache* own_loader_cache(const std::string& path) {
    if (path.empty()) return nullptr;
    auto [it, fresh] = own_loader_caches.try_emplace(path);
    if (fresh) {
      auto text = fs.read_text(path, size_t{256} << 20);
      auto parsed = text ? LdSoCache::parse(std::move(*text)) : Expected<LdSoCache>(Error{text.error()});
      if (parsed) it->second = std::move(*parsed);
      else if (text)
        diagnostics.push_back({"ld-so-cache-error", Severity::Warning, std::nullopt,
                               fmt::format("{}: {}; the loader that reads it searches its own directories only", path,
                                           parsed.error()),
                               "run that glibc's ldconfig, or remove the damaged file", path});
    }
    return it->second ? &*it->second : nullptr;
  }

  // A Windows process never consults ld.so.cache or ld.so.conf (a Windows tree has neither).
  AbiContext& abi_for(const ProcessAbi& abi, bool pe, const OwnLoader* own = nullptr) {
    auto key = std::make_tuple(abi.bits, abi.little_endian, abi.machine, pe, own ? own->path : std::string());
    auto it = abis.find(key);
    if (it != abis.end()) return *it->second;
    if (own && own->musl) return *abis.emplace(key, musl_context(abi, *own)).first->second;
    bool system_cache = !pe && (!own || own->build.cache_path == kCachePath);
    if (system_cache) load_cache_once();
    auto ctx = std::make_unique<AbiContext>();
    ctx->layout = pe ? detect_layout(fs, abi) : layout_for(fs, abi);
    if (own) ctx->layout.system_dirs = own->build.system_dirs;
    if (!env().lib.empty()) ctx->layout.lib = env().lib;
    ctx->platform = abi.machine == kEm386 ? "i686" : env().platform;  // x86-64 kernels give 32-bit processes i686
    SearchConfig config;
    config.abi = abi;
    config.cwd = env().cwd;
    config.system_dirs = ctx->layout.system_dirs;
    CacheSource source;
    source.query = cache_query_for(abi.bits, abi.machine, abi.little_endian);
    std::string interpreter = own ? own->path : default_interpreter(abi);
    ctx->release = glibc_release_of(fs, interpreter, ctx->layout.system_dirs);
    HwcapRules rules = hwcap_rules_for(ctx->release);
    if (abi.machine == kEmX8664 && abi.bits == 64) {
      if (rules.glibc_hwcaps) {
        for (const std::string& level : env().hwcaps) config.subdirs.push_back("glibc-hwcaps/" + level);
        source.query.glibc_hwcaps = env().hwcaps;
      }
      if (rules.legacy_subdirs)
        for (const std::string& dir : env().legacy_hwcaps) config.subdirs.push_back(dir);
      source.query.isa_levels = env().isa_levels;
      source.query.hwcap = env().hwcap_bits;
      source.query.platform_index = x86_platform_index(env().platform);
    } else if (abi.machine == kEm386 && rules.legacy_subdirs) {
      config.subdirs = legacy_hwcap_subdirs({"sse2", "i686", "tls"});
    } else if (rules.legacy_subdirs) {
      config.subdirs = {"tls"};
    }
    source.query.legacy_hwcap_entries = rules.legacy_cache_entries;
    if (system_cache) {
      source.cache = ld_cache ? &*ld_cache : nullptr;
      source.conf_dirs = ld_cache ? nullptr : &conf.dirs;
    } else if (own) {
      source.cache = own_loader_cache(own->build.cache_path);
    }
    ctx->search = std::make_unique<LibrarySearch>(fs, *dir_cache, std::move(config), source);
    return *abis.emplace(key, std::move(ctx)).first->second;
  }

  // musl's loader reads no cache and searches no hwcaps subdirectory; the first file a directory
  // holds is taken.
  std::unique_ptr<AbiContext> musl_context(const ProcessAbi& abi, const OwnLoader& own) {
    auto ctx = std::make_unique<AbiContext>();
    ctx->musl = true;
    ctx->layout.system_dirs = own.build.system_dirs;
    SearchConfig config;
    config.abi = abi;
    config.cwd = env().cwd;
    config.system_dirs = own.build.system_dirs;
    config.first_file_wins = true;
    ctx->search = std::make_unique<LibrarySearch>(fs, *dir_cache, std::move(config), CacheSource{});
    return ctx;
  }

  // ---------------------------------------------------------------- objects

  size_t object_for(const std::string& path, const Expected<BinaryPtr>& bin) {
    auto it = object_by_path.find(path);
    if (it != object_by_path.end()) return it->second;
    Object obj;
    obj.path = path;
    auto canon = fs.canonical(path);
    obj.realpath = canon ? *canon : path;
    if (bin) obj.binary = *bin;
    else obj.read_error = bin.error();
    if (auto info = fs.stat(path)) {
      obj.device = info->device;
      obj.inode = info->inode;
    }
    graph.objects.push_back(std::move(obj));
    object_by_path.emplace(path, graph.objects.size() - 1);
    return graph.objects.size() - 1;
  }

  static Expected<BinaryPtr> binary_or_error(const Object& o) {
    if (o.binary) return o.binary;
    return Error{o.read_error};
  }

  const Binary* binary_of(const RootWalk& walk, size_t loaded) const {
    return graph.objects[walk.loaded[loaded].object].binary.get();
  }

  DstContext dst_context(const RootWalk& walk, size_t loaded) const {
    const Object& obj = graph.objects[walk.loaded[loaded].object];
    DstContext ctx;
    bool is_main = loaded == walk.main;
    // The main program's $ORIGIN comes from its resolved path (/proc/self/exe); a library's
    // from the path it was opened by, symlinked directories left as they are.
    ctx.origin = dirname_of(is_main ? obj.realpath : obj.path);
    ctx.lib = walk.abi->layout.lib;
    ctx.platform = walk.abi->platform;
    ctx.secure = env().secure;
    ctx.is_executable = is_main;
    ctx.trusted_dirs = walk.abi->layout.system_dirs;
    return ctx;
  }

  const std::vector<std::string>* keep_list(std::vector<std::string> dirs) {
    return &*search_lists.insert(std::move(dirs)).first;
  }

  const std::vector<std::string>& rpath_dirs(const RootWalk& walk, size_t loaded) {
    bool is_main = loaded == walk.main;
    auto key = std::make_pair(walk.loaded[loaded].object, is_main);
    auto it = rpath_memo.find(key);
    if (it != rpath_memo.end()) return *it->second;
    std::vector<std::string> dirs;
    const Binary* bin = binary_of(walk, loaded);
    // elf_get_dynamic_info drops DT_RPATH of any object that also has DT_RUNPATH (the main
    // program's too), so such an object adds nothing to the RPATH chain. decompose_rpath ignores
    // an empty list (-rpath ""), where an empty entry of a longer one is the working directory.
    if (bin && bin->rpath && !bin->runpath && !bin->rpath->empty())
      dirs = split_search_path(*bin->rpath, ":", dst_context(walk, loaded));
    return *rpath_memo.emplace(key, keep_list(std::move(dirs))).first->second;
  }

  const std::vector<std::string>& runpath_dirs(const RootWalk& walk, size_t loaded) {
    auto key = std::make_pair(walk.loaded[loaded].object, loaded == walk.main);
    auto it = runpath_memo.find(key);
    if (it != runpath_memo.end()) return *it->second;
    std::vector<std::string> dirs;
    const Binary* bin = binary_of(walk, loaded);
    if (bin && bin->runpath && !bin->runpath->empty())  // ignored when empty, as an empty RPATH
      dirs = split_search_path(*bin->runpath, ":", dst_context(walk, loaded));
    return *runpath_memo.emplace(key, keep_list(std::move(dirs))).first->second;
  }

  // Depends on the walk only through its main program ($ORIGIN) and ABI ($LIB).
  const std::vector<std::string>& ld_library_path_dirs(const RootWalk& walk) {
    auto key = std::make_pair(walk.main == kNone ? kNone : walk.loaded[walk.main].object,
                              static_cast<const AbiContext*>(walk.abi));
    auto it = ld_library_path_memo.find(key);
    if (it != ld_library_path_memo.end()) return *it->second;
    return *ld_library_path_memo.emplace(key, keep_list(expand_ld_library_path(walk))).first->second;
  }

  std::vector<std::string> expand_ld_library_path(const RootWalk& walk) const {
    if (env().secure || env().ld_library_path.empty()) return {};
    DstContext ctx;
    if (walk.main != kNone) ctx = dst_context(walk, walk.main);
    else {
      ctx.origin = env().cwd;  // the trivial program that dlopens a library root
      ctx.lib = walk.abi->layout.lib;
      ctx.platform = walk.abi->platform;
    }
    return split_search_path(env().ld_library_path, ":;", ctx);  // an empty element is the current directory
  }

  // _dl_map_object's search lists for a name requested by `requester`.
  SearchRequest search_request(RootWalk& walk, size_t requester, std::string_view name) {
    SearchRequest req;
    req.name = std::string(name);
    const Binary* bin = requester == kNone ? nullptr : binary_of(walk, requester);
    req.nodeflib = bin && bin->nodeflib();
    if (!bin || !bin->runpath) {
      bool did_main = false;
      size_t at = requester == kNone ? kNone : walk.loaded[requester].rpath_anchor;
      while (at != kNone) {
        const auto& dirs = rpath_dirs(walk, at);
        std::string label = at == requester ? "rpath"
                                            : "rpath of " + display_name(graph.objects[walk.loaded[at].object]);
        req.lists.push_back({How::Rpath, std::move(label), &dirs});
        did_main = did_main || at == walk.main;
        size_t up = walk.loaded[at].loader;
        at = up == kNone ? kNone : walk.loaded[up].rpath_anchor;
      }
      if (!did_main && walk.main != kNone && !rpath_dirs(walk, walk.main).empty())
        req.lists.push_back({How::Rpath, "rpath of " + display_name(graph.objects[walk.loaded[walk.main].object]),
                             &rpath_dirs(walk, walk.main)});
    }
    const auto& llp = ld_library_path_dirs(walk);
    if (!llp.empty()) req.lists.push_back({How::LdLibraryPath, "LD_LIBRARY_PATH", &llp});
    if (bin && bin->runpath) req.lists.push_back({How::Runpath, "runpath", &runpath_dirs(walk, requester)});
    return req;
  }

  // musl's RPATH, or its RUNPATH when it has one, with only $ORIGIN and ${ORIGIN} expanded: any other
  // '$' makes musl drop the object's list.
  const std::vector<std::string>& musl_rpath_dirs(const RootWalk& walk, size_t loaded) {
    auto key = std::make_pair(walk.loaded[loaded].object, loaded == walk.main);
    auto it = musl_rpath_memo.find(key);
    if (it != musl_rpath_memo.end()) return *it->second;
    std::vector<std::string> dirs;
    const Binary* bin = binary_of(walk, loaded);
    const std::optional<std::string>& list = bin && bin->runpath ? bin->runpath : bin ? bin->rpath : std::nullopt;
    if (list && !(env().secure && loaded == walk.main && list->find('$') != std::string::npos))
      if (auto expanded = expand_musl_origin(*list, dst_context(walk, loaded).origin))
        dirs = split_musl_path(*expanded);
    return *musl_rpath_memo.emplace(key, keep_list(std::move(dirs))).first->second;
  }

  // load_library's lists for a name without '/': LD_LIBRARY_PATH as written, then the RPATH or
  // RUNPATH of the requester and of each object above it on the chain that loaded it (for dlopen,
  // the main program's chain; for a preload, none); the system directories follow in the search.
  SearchRequest musl_search_request(RootWalk& walk, const Request& rq, std::string_view name) {
    SearchRequest req;
    req.name = std::string(name);
    if (!env().secure) {
      if (!musl_ld_library_path) musl_ld_library_path = keep_list(split_musl_path(env().ld_library_path));
      if (!musl_ld_library_path->empty())
        req.lists.push_back({How::LdLibraryPath, "LD_LIBRARY_PATH", musl_ld_library_path});
    }
    size_t at = rq.kind == EdgeKind::Preload ? kNone : rq.dlopen ? walk.main : rq.requester;
    for (; at != kNone; at = walk.loaded[at].loader) {
      const Binary* bin = binary_of(walk, at);
      bool runpath = bin && bin->runpath;
      std::string label = runpath ? "runpath" : "rpath";
      if (at != rq.requester || rq.dlopen) label += " of " + display_name(graph.objects[walk.loaded[at].object]);
      req.lists.push_back({runpath ? How::Runpath : How::Rpath, std::move(label), &musl_rpath_dirs(walk, at)});
    }
    return req;
  }

  // The one attempt of an edge to an object already loaded as `name`; the roots share it.
  const AttemptList& already_loaded_attempts(size_t object, std::string_view name) {
    auto& lists = already_loaded_lists[object];
    for (const auto& [known_name, list] : lists)
      if (known_name == name) return list;
    AttemptList list{{graph.objects[object].path, concat("already loaded as ", name)}};
    return lists.emplace_back(std::string(name), std::move(list)).second;
  }

  // ---------------------------------------------------------------- loading

  // `by_soname` false: the object is not yet known by its soname (a library root, until the
  // process has what it loaded before it).
  size_t add_loaded(RootWalk& walk, size_t object, size_t loader, bool is_main = false, bool by_soname = true) {
    Loaded l;
    l.object = object;
    l.loader = loader;
    walk.loaded.push_back(l);
    size_t index = walk.loaded.size() - 1;
    if (is_main) walk.main = index;
    walk.by_object.emplace(object, index);
    const Object& obj = graph.objects[object];
    bool has_rpath = !rpath_dirs(walk, index).empty();
    walk.loaded[index].rpath_anchor = has_rpath ? index : loader == kNone ? kNone : walk.loaded[loader].rpath_anchor;
    if (by_soname) know_by_soname(walk, index);
    if (obj.device || obj.inode) walk.files.emplace(std::make_pair(obj.device, obj.inode), index);
    return index;
  }

  void know_by_soname(RootWalk& walk, size_t loaded) {
    const Object& obj = graph.objects[walk.loaded[loaded].object];
    if (obj.binary && obj.binary->soname && !walk.abi->musl) walk.names.emplace(*obj.binary->soname, loaded);
  }

  void enter_scope(RootWalk& walk, size_t loaded, size_t root_index) {
    if (walk.loaded[loaded].in_scope) return;
    walk.loaded[loaded].in_scope = true;
    graph.load_order[root_index].push_back(walk.loaded[loaded].object);
    walk.queue.push_back(loaded);
  }

  // Resolves one request: returns the edge (not yet stored) and the Loaded it reached.
  std::pair<Edge, size_t> resolve(RootWalk& walk, size_t root_index, const Request& rq) {
    Edge edge;
    edge.from = rq.requester == kNone ? walk.root_object : walk.loaded[rq.requester].object;
    edge.name = std::string(rq.name);
    edge.kind = rq.kind;
    edge.root = root_index;
    std::string_view name = rq.name;
    std::string expanded_name;  // name after $ORIGIN, $LIB and $PLATFORM
    bool wants_expansion = (rq.expand_bare_names || name.find('/') != std::string::npos) && !walk.abi->musl;
    if (wants_expansion && has_dst(name) && rq.requester != kNone) {
      if (env().secure && rq.kind == EdgeKind::Needed) {
        edge.how_detail = "DST not allowed in SUID/SGID programs";
        edge.tried.push_back({std::string(name), edge.how_detail});
        return {std::move(edge), kNone};
      }
      auto expanded = substitute_dst(name, dst_context(walk, rq.requester));
      if (!expanded || expanded->empty()) {
        edge.how_detail = "empty dynamic string token substitution";
        edge.tried.push_back({std::string(name), edge.how_detail});
        return {std::move(edge), kNone};
      }
      expanded_name = std::move(*expanded);
      name = expanded_name;
    }
    if (walk.pe) return resolve_pe(walk, std::move(edge), std::string(name));
    if (walk.abi->musl && is_musl_reserved_name(name) && walk.interpreter != kNone) {
      edge.how = How::AlreadyLoaded;
      edge.how_detail = "musl's C library itself";
      edge.to = walk.loaded[walk.interpreter].object;
      edge.tried = already_loaded_attempts(*edge.to, name);
      return {std::move(edge), walk.interpreter};
    }
    auto known = name.empty() && walk.main != kNone && !walk.abi->musl ? main_by_empty_name(walk) : walk.names.find(name);
    if (known != walk.names.end()) {
      edge.how = How::AlreadyLoaded;
      edge.how_detail = "already loaded";
      edge.to = walk.loaded[known->second].object;
      edge.tried = already_loaded_attempts(*edge.to, name);
      return {std::move(edge), known->second};
    }
    if (env().secure && rq.kind == EdgeKind::Preload && name.find('/') != std::string::npos) {
      edge.how_detail = "ignored in secure mode (name contains '/')";
      return {std::move(edge), kNone};
    }
    LibrarySearch& search = *walk.abi->search;
    SearchResult direct;
    const SearchResult& found = name.find('/') != std::string::npos
                                    ? (direct = search.open_direct(std::string(name)))
                                    : search.search(walk.abi->musl ? musl_search_request(walk, rq, name)
                                                                   : search_request(walk, rq.requester, name));
    edge.tried = found.attempts;
    edge.how = found.how;
    edge.how_detail = found.how_detail;
    if (!found.path) return {std::move(edge), kNone};
    return attach(walk, std::move(edge), name, *found.path, rq);
  }

  // What _dl_map_object_from_fd refuses in a file open_verify accepted, in its order: the loader stops.
  static const char* map_refusal(const Binary& b) {
    if (b.load_alignment == 0) return "object file has no loadable segments";
    if (b.file_type == kEtExec) return "cannot dynamically load executable";
    if (!b.has_dynamic) return "object file has no dynamic section";
    if (b.dt_flags_1 & kDf1Pie) return "cannot dynamically load position-independent executable";
    return nullptr;
  }

  // The program's link map has the empty name, which an empty NEEDED string matches.
  StringMap<size_t>::iterator main_by_empty_name(RootWalk& walk) {
    return walk.names.try_emplace("", walk.main).first;
  }

  // A file was found: reuse an object with the same file id, or load it.
  std::pair<Edge, size_t> attach(RootWalk& walk, Edge edge, std::string_view name,
                                 const std::string& path, const Request& rq) {
    if (!rq.loaded_by.empty()) {
      edge.how_detail = std::string(rq.loaded_by) + " (" + edge.how_detail + ")";
      if (rq.kind == EdgeKind::Preload) edge.how = How::Preload;
    }
    // A path an earlier root loaded already has its object: its file id and model are known.
    auto known = object_by_path.find(path);
    std::optional<std::pair<uint64_t, uint64_t>> file_id;
    if (known != object_by_path.end()) {
      const Object& o = graph.objects[known->second];
      if (o.device || o.inode) file_id.emplace(o.device, o.inode);
    } else if (auto info = fs.stat(path)) {
      file_id.emplace(info->device, info->inode);
    }
    if (file_id) {
      auto same = walk.files.find(*file_id);
      // The program's and glibc's loader's own link maps have no file id: another path to either
      // is opened again (and refused, or mapped a second time).
      if (same != walk.files.end() && (same->second == walk.main || (same->second == walk.interpreter && !walk.abi->musl)))
        same = walk.files.end();
      if (same != walk.files.end()) {
        if (!dry_run) walk.names.emplace(std::string(name), same->second);
        edge.to = walk.loaded[same->second].object;
        if (graph.objects[*edge.to].path != path) edge.how_detail += ", same file as " + graph.objects[*edge.to].path;
        return {std::move(edge), same->second};
      }
    }
    Expected<BinaryPtr> bin = known != object_by_path.end() ? binary_or_error(graph.objects[known->second])
                                                            : cache.get(path);
    if (bin && (*bin)->format == Format::Elf && !walk.abi->musl) {
      if (const char* refusal = map_refusal(**bin)) {
        edge.how = How::NotFound;
        edge.how_detail = refusal;
        if (!edge.tried.empty())  // a preload it refuses, the loader ignores
          edge.tried.edit().back().outcome = std::string(refusal) + (rq.kind == EdgeKind::Preload ? "" : std::string(kLoaderStops));
        return {std::move(edge), kNone};
      }
    }
    if (bin && (*bin)->format == Format::Elf && walk.abi->musl && walk.interpreter != kNone &&
        second_c_library(path, **bin)) {
      edge.how = How::AlreadyLoaded;
      edge.how_detail = "musl's C library itself: " + path + " defines __libc_start_main and stdin, so musl loads "
                        "itself instead of another C library";
      edge.to = walk.loaded[walk.interpreter].object;
      return {std::move(edge), walk.interpreter};
    }
    if (dry_run) return {std::move(edge), kNone};
    size_t object = object_for(path, bin);
    size_t loader = rq.dlopen ? (walk.abi->musl ? walk.main : kNone) : rq.requester;  // musl: needed_by = head
    size_t index = add_loaded(walk, object, loader);
    walk.names.emplace(std::string(name), index);
    walk.names.emplace(path, index);
    edge.to = object;
    return {std::move(edge), index};
  }

  std::pair<Edge, size_t> resolve_pe(RootWalk& walk, Edge edge, const std::string& name) {
    std::string key = pe_name_key(name);
    auto known = walk.names.find(key);
    if (known != walk.names.end()) {
      edge.how = How::AlreadyLoaded;
      edge.how_detail = "already loaded";
      edge.to = walk.loaded[known->second].object;
      edge.tried.push_back({graph.objects[*edge.to].path, "already loaded"});
      return {std::move(edge), known->second};
    }
    PeSearchResult found = search_pe_dll(cache, *dir_cache, pe_search_dirs(walk), name, walk.process.machine);
    edge.tried = AttemptList(std::move(found.attempts));
    edge.how = found.path ? How::SearchOrder : How::NotFound;
    edge.how_detail = found.detail;
    edge.system_provided = found.system_provided;
    if (auto unchecked = found.path ? std::nullopt : unchecked_windows_dll(name)) {
      edge.system_provided = true;
      edge.how_detail = *unchecked;
    }
    if (!found.path || dry_run) return {std::move(edge), kNone};
    auto info = fs.stat(*found.path);
    if (info) {
      auto same = walk.files.find({info->device, info->inode});
      if (same != walk.files.end()) {
        walk.names.emplace(key, same->second);
        edge.to = walk.loaded[same->second].object;
        return {std::move(edge), same->second};
      }
    }
    size_t object = object_for(*found.path, cache.get(*found.path));
    size_t index = add_loaded(walk, object, kNone);
    walk.names.emplace(key, index);
    edge.to = object;
    return {std::move(edge), index};
  }

  // What a DLL that every Windows or the NVIDIA driver installs in System32 is, while the
  // analysed tree holds no Windows directory to look for it in.
  std::optional<std::string> unchecked_windows_dll(const std::string& name) const {
    auto listed = [key = pe_name_key(name)](const std::vector<std::string>& names) {
      return std::find(names.begin(), names.end(), key) != names.end();
    };
    const WindowsDllLists& lists = windows_dll_lists();
    bool system = listed(lists.system), driver = !system && listed(lists.driver);
    if (!system && !driver) return std::nullopt;
    const auto& dirs = windows_system_directories();
    if (std::any_of(dirs.begin(), dirs.end(), [&](const std::string& d) { return dir_cache->is_directory(d); }))
      return std::nullopt;
    return system ? "Windows system DLL, not in the scan" : "NVIDIA driver DLL, not in the scan";
  }

  const WindowsDllLists& windows_dll_lists() const {
    if (!windows_lists) windows_lists = options.windows_dlls ? options.windows_dlls() : WindowsDllLists{};
    return *windows_lists;
  }

  std::vector<std::string> pe_search_dirs(const RootWalk& walk) const {
    std::vector<std::string> dirs = {dirname_of(graph.objects[walk.root_object].path)};
    for (const std::string& d : windows_system_directories()) dirs.push_back(d);
    for (const std::string& d : env().pe_search_path) dirs.push_back(d);
    return dirs;
  }

  void record(RootWalk& walk, size_t root_index, std::pair<Edge, size_t> result) {
    graph.edges.push_back(std::move(result.first));
    if (result.second != kNone) enter_scope(walk, result.second, root_index);
  }

  // Processes the BFS queue until it is empty: NEEDED (and PE delay imports) of each object.
  void drain(RootWalk& walk, size_t root_index) {
    while (walk.next < walk.queue.size()) load_needed_of(walk, root_index, walk.queue[walk.next++]);
  }

  // In the order of the dynamic section, as _dl_map_object_deps reads it: a filtee ahead of a NEEDED
  // entry is mapped first, and that NEEDED entry may match its soname.
  void load_needed_of(RootWalk& walk, size_t root_index, size_t current) {
    const Binary* bin = binary_of(walk, current);
    if (!bin) return;
    size_t insert_at = walk.next;  // the filtees are processed next, in order
    auto filtee = bin->filtees.begin();
    auto load_filtees_before = [&](size_t needed_index) {
      for (; filtee != bin->filtees.end() && filtee->needed_before <= needed_index; ++filtee)
        load_filtee(walk, root_index, current, *filtee, insert_at);
    };
    for (size_t i = 0; i < bin->needed.size(); ++i) {
      load_filtees_before(i);
      const std::string& needed = bin->needed[i];
      // A library root's process is a program the scan does not know, whose empty name this matches.
      if (needed.empty() && walk.main == kNone && !walk.pe && !walk.abi->musl) continue;
      Request rq{needed, EdgeKind::Needed, current, true, false, ""};
      record(walk, root_index, resolve(walk, root_index, rq));
    }
    load_filtees_before(bin->needed.size());
    for (const std::string& delayed : bin->delay_needed) {
      Request rq{delayed, EdgeKind::Delay, current, true, false, ""};
      record(walk, root_index, resolve(walk, root_index, rq));
    }
  }

  void load_filtee(RootWalk& walk, size_t root_index, size_t current, const FilteeName& filtee, size_t& insert_at) {
    Request rq{filtee.name, EdgeKind::Needed, current, true, false, ""};
    auto [edge, loaded] = resolve(walk, root_index, rq);
    edge.filtee = filtee.auxiliary ? Filtee::Auxiliary : Filtee::Filter;
    if (edge.filtee == Filtee::Auxiliary && !edge.to && !edge.tried.empty())  // a failure the loader catches
      if (std::string& outcome = edge.tried.edit().back().outcome; outcome.ends_with(kLoaderStops))
        outcome.replace(outcome.size() - kLoaderStops.size(), kLoaderStops.size(), " (the loader goes on)");
    Placement placed = loaded == kNone ? Placement::Kept : place_before_filter(walk, root_index, loaded, current, insert_at);
    if (placed == Placement::Placed) ++insert_at;
    if (placed == Placement::Cycle) {  // glibc moves them around each other until its stack overflows
      edge.to.reset();
      edge.filter_cycle = true;
      edge.how = How::NotFound;
      edge.how_detail = fmt::format("filter cycle: {}, a filter already worked on, is a filtee of {}; ld.so moves "
                                    "the filters of the cycle before each other without end and crashes", edge.name,
                                    graph.objects[walk.loaded[current].object].path);
    }
    graph.edges.push_back(std::move(edge));
  }

  enum class Placement { Placed, Kept, Cycle };

  // _dl_map_object_deps puts a filtee just before its filter in the search list (a new one, or one
  // further down the list; one already before the filter stays), and works on its NEEDED next. A
  // filtee further down that was worked on already is a cycle of filters.
  Placement place_before_filter(RootWalk& walk, size_t root_index, size_t filtee, size_t filter, size_t insert_at) {
    std::vector<size_t>& order = graph.load_order[root_index];
    auto filter_at = std::find(order.begin(), order.end(), walk.loaded[filter].object);
    auto filtee_at = std::find(order.begin(), order.end(), walk.loaded[filtee].object);
    if (filtee == filter || (walk.loaded[filtee].in_scope && (filtee_at < filter_at || filtee_at == order.end())))
      return Placement::Kept;
    if (walk.loaded[filtee].in_scope) {
      auto queued = std::find(walk.queue.begin(), walk.queue.end(), filtee);
      if (queued < walk.queue.begin() + static_cast<ptrdiff_t>(walk.next)) return Placement::Cycle;
      if (queued != walk.queue.end()) walk.queue.erase(queued);
      order.erase(filtee_at);
      filter_at = std::find(order.begin(), order.end(), walk.loaded[filter].object);
    }
    walk.loaded[filtee].in_scope = true;
    order.insert(filter_at, walk.loaded[filtee].object);
    walk.queue.insert(walk.queue.begin() + static_cast<ptrdiff_t>(insert_at), filtee);
    return Placement::Placed;
  }

  // A library root is loaded into a process that already has the preloads and `loaded_first`, with
  // their closures: they come before it in the lookup scope, and their NEEDED entries are searched
  // before its own. A library loaded RTLD_GLOBAL is a preload edge (global scope, as LD_PRELOAD's);
  // one loaded RTLD_LOCAL a dlopen edge.
  void load_before_library(RootWalk& walk, size_t root_index, std::span<const LoadedBeforeRoot> loaded_first) {
    load_preloads(walk, root_index);
    drain(walk, root_index);
    for (const LoadedBeforeRoot& library : loaded_first) {
      Request rq{library.path, library.global ? EdgeKind::Preload : EdgeKind::Dlopen, kNone, false, !library.global,
                 library.by};
      auto result = resolve(walk, root_index, rq);
      if (result.first.how == How::Preload) result.first.how = How::DirectPath;  // not LD_PRELOAD's interposition
      result.first.loaded_first = true;
      if (!result.first.to) report_not_loaded_first(walk, library, result.first.how_detail);
      record(walk, root_index, std::move(result));
      drain(walk, root_index);
    }
  }

  // The file is there (the rows name existing files) but cannot be loaded: ctypes raises, and so
  // does the import that loads it first.
  void report_not_loaded_first(const RootWalk& walk, const LoadedBeforeRoot& library, const std::string& why) {
    const std::string& module = graph.objects[walk.root_object].path;
    diagnostics.push_back({"library-not-found", Severity::Error, walk.root_object,
                           fmt::format("{}: cannot be loaded ({}), {}, so importing {} fails", library.path, why,
                                       library.by, module),
                           fmt::format("reinstall the distribution that ships {}", basename_of(library.path)), ""});
  }

  const std::vector<std::string>& etc_preload_entries() {
    if (!etc_preload) {
      etc_preload.emplace();
      auto text = fs.read_text(kPreloadPath);
      if (text) *etc_preload = parse_ld_so_preload(*text);
    }
    return *etc_preload;
  }

  void load_preloads(RootWalk& walk, size_t root_index) {
    std::vector<std::pair<std::string, std::string>> entries;
    for (const std::string& p : env().preload) entries.emplace_back(p, "LD_PRELOAD");
    if (env().use_etc_preload && !walk.abi->musl)  // musl reads no /etc/ld.so.preload
      for (const std::string& p : etc_preload_entries()) entries.emplace_back(p, kPreloadPath);
    for (const auto& [name, source] : entries) {
      Request rq{name, EdgeKind::Preload, walk.main, false, false, source};
      auto result = resolve(walk, root_index, rq);
      if (!result.first.to && result.first.how != How::AlreadyLoaded) {
        result.first.how_detail = source + ": " + result.first.how_detail;
        std::string message = fmt::format("ld.so: object '{}' from {} cannot be preloaded ({}): ignored", name,
                                          source, result.first.how_detail);
        if (preload_failures_said.insert(message).second)  // every root's process says the same: once
          diagnostics.push_back({"preload-not-loaded", Severity::Warning, walk.root_object, std::move(message),
                                 "fix or remove the preload entry", ""});
      }
      record(walk, root_index, std::move(result));
    }
  }

  void seed_interpreter(RootWalk& walk, const Binary& bin) {
    std::string interp = !bin.interpreter.empty() ? bin.interpreter
                         : walk.own_loader      ? walk.own_loader->path
                                                : default_interpreter(process_abi_of(bin));
    if (interp.empty() || bin.format != Format::Elf || !fs.is_regular(interp)) return;
    auto interp_bin = cache.get(interp);
    if (!interp_bin) return;
    auto info = fs.stat(interp);
    if (info) {
      auto same = walk.files.find({info->device, info->inode});
      if (same != walk.files.end()) {
        walk.interpreter = same->second;
        return;
      }
    }
    size_t index = add_loaded(walk, object_for(interp, interp_bin), kNone);
    walk.names.emplace(interp, index);
    walk.interpreter = index;
  }

  // The loader a program runs under, when it is its own: with what that loader was built with,
  // and a finding saying which loader the graph follows.
  std::optional<OwnLoader> own_loader_of(size_t object, const Binary& b) {
    auto path = own_loader_path(fs, b);
    if (!path) return std::nullopt;
    auto loader = cache.get(*path);  // not an ELF loader of the program's kind: program-interpreter says so
    if (!loader || (*loader)->format != Format::Elf || (*loader)->bits != b.bits || (*loader)->machine != b.machine)
      return std::nullopt;
    if (musl_loader_arch(*path)) return musl_loader(*path, object);
    auto [it, fresh] = loader_builds.try_emplace(*path);
    if (fresh) it->second = read_loader_build(fs, *path);
    const std::optional<LoaderBuild>& build = it->second;
    std::string system = default_interpreter(process_abi_of(b));
    if (!build) {
      diagnostics.push_back({"program-loader", Severity::Warning, object,
                             fmt::format("{}: runs under its own loader {}, not the system's {}, and depscan cannot "
                                         "read that loader's built-in search path: the graph follows the system loader's",
                                         graph.objects[object].path, *path, system),
                             fmt::format("compare with that loader's own listing: {} --list {}", *path,
                                         graph.objects[object].path),
                             ""});
      return std::nullopt;
    }
    std::string cache_note = build->cache_path;
    if (cache_note.empty()) cache_note = "none";
    else if (cache_note != kCachePath && !own_loader_cache(cache_note)) cache_note += ", absent: not used";
    diagnostics.push_back({"program-loader", Severity::Info, object,
                           fmt::format("{}: runs under its own loader {}, not the system's {}: the graph follows that "
                                       "loader's search path ({}) and cache ({})",
                                       graph.objects[object].path, *path, system, fmt::join(build->system_dirs, ":"),
                                       cache_note),
                           "", ""});
    return OwnLoader{*path, *build, false, ""};
  }

  // is_second_c_library(), asked once per file: every musl walk that finds the file asks.
  bool second_c_library(const std::string& path, const Binary& b) {
    auto [it, fresh] = second_c_libraries.try_emplace(path);
    if (fresh) it->second = is_second_c_library(b);
    return it->second;
  }

  // system_musl_loader(), asked once per class and machine.
  const std::optional<std::string>& system_musl(const ProcessAbi& abi) {
    auto [it, fresh] = system_musl_loaders.try_emplace(abi);
    if (fresh) it->second = system_musl_loader(fs, abi);
    return it->second;
  }

  // The root's loader as the report names it: the program's own, not the system's.
  std::string own_loader_named(const RootWalk& walk) {
    if (!walk.own_loader) return "";
    const auto& b = graph.objects[walk.root_object].binary;
    bool system = walk.own_loader->musl && b && system_musl(process_abi_of(*b)) == walk.own_loader->path;
    return system ? "" : walk.own_loader->path;
  }

  // musl's loader at `path`; `program` runs under it in a system whose own loader is another (a
  // finding says so), kNone for the system's loader of a musl root. A library root linked against
  // musl's C library by `musl_libc` loads only in a process of that loader.
  OwnLoader musl_loader(const std::string& path, size_t program, std::string_view musl_libc = {}) {
    auto [known, fresh] = musl_search_paths.try_emplace(path);
    if (fresh) known->second = musl_search_path(fs, path);
    const MuslSearchPath& search = known->second;
    OwnLoader own{path, LoaderBuild{search.dirs, ""}, true, search.path_file};
    if (program == kNone ||
        system_musl(process_abi_of(*graph.objects[program].binary)) == path)
      return own;
    std::string from = search.path_file.empty() ? "musl's default" : "from " + search.path_file;
    std::string runs = musl_libc.empty()
                           ? fmt::format("runs under musl's loader {}", path)
                           : fmt::format("is linked against musl's C library ({}) and loads only in a process of "
                                         "musl's loader {}", musl_libc, path);
    diagnostics.push_back({"program-loader", Severity::Info, program,
                           fmt::format("{}: {}: the graph follows musl's search: LD_LIBRARY_PATH, the RPATH or "
                                       "RUNPATH of each object up the chain that loaded it, then {} ({}); no "
                                       "ld.so.cache",
                                       graph.objects[program].path, runs, fmt::join(search.dirs, ":"), from),
                           "", ""});
    return own;
  }

  // A library (no PT_INTERP) linked against musl's C library, in a root with musl's loader: the
  // process that loads it runs under that loader, whatever the root's own C library is.
  std::optional<OwnLoader> musl_library_loader(size_t object, const Binary& b) {
    if (!b.interpreter.empty()) return std::nullopt;
    std::string musl_libc = musl_libc_needed(b);
    if (musl_libc.empty()) return std::nullopt;
    auto [it, fresh] = root_musl_loaders.try_emplace(process_abi_of(b));
    if (fresh) it->second = musl_loader_of_root(fs, process_abi_of(b));
    const std::optional<std::string>& loader = it->second;
    if (!loader) return std::nullopt;
    return musl_loader(*loader, object, musl_libc);
  }

  size_t add_root(const std::string& path, std::span<const LoadedBeforeRoot> loaded_first) {
    size_t root_index = graph.roots.size();
    auto bin = cache.get(path);
    size_t object = object_for(path, bin);
    graph.roots.push_back(object);
    graph.load_order.emplace_back();
    graph.root_loaders.emplace_back();
    walks.emplace_back();
    RootWalk& walk = walks.back();
    walk.root_object = object;
    walk.names.reserve(48);  // a library's walk: about 10 objects, 3 names each; no rehash on the way
    walk.by_object.reserve(16);
    walk.loaded.reserve(16);
    walk.queue.reserve(16);
    if (!bin) {
      graph.load_order[root_index].push_back(object);
      return root_index;
    }
    const Binary& b = **bin;
    walk.pe = b.format == Format::Pe;
    walk.process = process_abi_of(b);
    if (!walk.pe) walk.own_loader = own_loader_of(object, b);
    if (!walk.pe && !walk.own_loader)
      if (const auto& musl = system_musl(walk.process))
        walk.own_loader = musl_loader(*musl, kNone);
    if (!walk.pe && !walk.own_loader) walk.own_loader = musl_library_loader(object, b);
    walk.abi = &abi_for(walk.process, walk.pe, walk.own_loader ? &*walk.own_loader : nullptr);
    if (!walk.pe)
      graph.root_loaders[root_index] = RootLoader{own_loader_named(walk), walk.abi->release, walk.abi->musl};
    // A program is started; a library is loaded into a process that has its preloads, and knows
    // the library by its soname only once it is mapped, after them.
    bool library_root = !walk.pe && !b.is_executable();
    size_t index = add_loaded(walk, object, kNone, !walk.pe && !library_root, !library_root);
    if (walk.pe) walk.names.emplace(pe_name_key(basename_of(path)), index);
    else if (walk.main == kNone) walk.names.emplace(path, index);  // known by the path it was opened by
    if (!walk.pe) seed_interpreter(walk, b);
    if (library_root) {
      load_before_library(walk, root_index, loaded_first);
      know_by_soname(walk, index);
    }
    enter_scope(walk, index, root_index);
    if (!walk.pe && !library_root) load_preloads(walk, root_index);  // queued after the program, before its NEEDED
    drain(walk, root_index);
    return root_index;
  }
};

Resolver::Resolver(BinaryCache& cache, ResolveOptions options)
    : impl_(std::make_unique<Impl>(cache, std::move(options))) {}
Resolver::~Resolver() = default;

size_t Resolver::add_root(const std::string& logical_path, std::span<const LoadedBeforeRoot> loaded_first) {
  return impl_->add_root(logical_path, loaded_first);
}

void Resolver::reserve_roots(size_t count) {
  // A CUDA library loads about 20 objects, each found once by name and again as "already loaded".
  constexpr size_t kEdgesPerRoot = 32, kMostEdgesReserved = size_t{1} << 17;
  Graph& g = impl_->graph;
  g.edges.reserve(g.edges.size() + std::min(count * kEdgesPerRoot, kMostEdgesReserved));
  g.roots.reserve(g.roots.size() + count);
  g.load_order.reserve(g.load_order.size() + count);
  g.root_loaders.reserve(g.root_loaders.size() + count);
  impl_->walks.reserve(impl_->walks.size() + count);
}

size_t Resolver::add_dlopen(size_t root_index, size_t from, const std::string& name, bool inferred,
                            const std::string& source) {
  Impl& im = *impl_;
  RootWalk& walk = im.walks.at(root_index);
  auto it = walk.by_object.find(from);
  size_t requester = it != walk.by_object.end() ? it->second : walk.main;
  if (walk.abi == nullptr) {  // the root could not be read: nothing to search with
    Edge edge;
    edge.from = from;
    edge.name = name;
    edge.kind = EdgeKind::Dlopen;
    edge.inferred = inferred;
    edge.source = source;
    edge.root = root_index;
    edge.how_detail = "the root could not be read";
    im.graph.edges.push_back(std::move(edge));
    return im.graph.edges.size() - 1;
  }
  Request rq{name, EdgeKind::Dlopen, requester, false, true, ""};
  auto result = im.resolve(walk, root_index, rq);
  result.first.from = from;
  result.first.inferred = inferred;
  result.first.source = source;
  im.record(walk, root_index, std::move(result));
  size_t edge_index = im.graph.edges.size() - 1;
  im.drain(walk, root_index);
  return edge_index;
}

std::vector<Attempt> Resolver::explain(size_t root_index, size_t from, const std::string& name) const {
  Impl& im = *impl_;
  RootWalk& walk = im.walks.at(root_index);
  if (walk.abi == nullptr) return {{im.graph.objects[walk.root_object].path, "could not be read"}};
  auto it = walk.by_object.find(from);
  size_t requester = it != walk.by_object.end() ? it->second : (walk.main != kNone ? walk.main : 0);
  // A dry run changes nothing in the walk: resolve() neither loads nor names what it finds.
  Request rq{name, EdgeKind::Needed, requester, true, false, ""};
  im.dry_run = true;
  Edge edge = im.resolve(walk, root_index, rq).first;
  im.dry_run = false;
  std::string found;
  if (edge.to) found = im.graph.objects[*edge.to].path;
  for (const Attempt& a : edge.tried)
    if (a.outcome == "taken") found = a.path;
  std::vector<Attempt> steps = edge.tried.to_vector();
  std::string how = edge.how_detail.empty() ? to_string(edge.how) : edge.how_detail;
  steps.push_back({name, edge.how != How::NotFound && !found.empty()
                             ? fmt::format("found {} via {}", found, how)
                             : fmt::format("not found: {}", how)});
  return steps;
}

const Graph& Resolver::graph() const { return impl_->graph; }

const OwnLoader* Resolver::own_loader(size_t root_index) const {
  const auto& own = impl_->walks[root_index].own_loader;
  return own ? &*own : nullptr;
}
Graph Resolver::take_graph() { return std::move(impl_->graph); }
const std::vector<Finding>& Resolver::diagnostics() const { return impl_->diagnostics; }

}  // namespace depscan
