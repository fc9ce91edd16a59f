// Hand-built graphs for the symbol checks: objects with dynamic symbols and version tables,
// NEEDED edges and a load order, without reading any file.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "analyzer/check/check.h"
#include "analyzer/check/symbol_index.h"
#include "analyzer/input/fs.h"
#include "analyzer/model.h"
#include "matrix/matrix.h"

namespace depscan::test {

// Where the hand-built symbols' strings live: for the whole test run.
inline StringArena& strings() {
  static StringArena arena;
  return arena;
}

inline Symbol def(std::string name, std::string version = "", uint16_t index = 1, bool hidden = false,
                  SymbolType type = SymbolType::Func, SymbolBinding binding = SymbolBinding::Global) {
  Symbol s;
  s.name = strings().keep(name);
  s.defined = true;
  s.binding = binding;
  s.type = type;
  s.version = strings().keep(version);
  s.version_index = index;
  s.hidden = hidden;
  return s;
}

inline Symbol ref(std::string name, std::string version = "", std::string file = "", uint16_t index = 1,
                  SymbolType type = SymbolType::Func, SymbolBinding binding = SymbolBinding::Global) {
  Symbol s;
  s.name = strings().keep(name);
  s.defined = false;
  s.binding = binding;
  s.type = type;
  s.version = strings().keep(version);
  s.version_file = strings().keep(file);
  s.version_index = index;
  return s;
}

inline Binary elf(std::optional<std::string> soname = std::nullopt, bool executable = false) {
  Binary b;
  b.format = Format::Elf;
  b.bits = 64;
  b.machine = 62;
  b.file_type = executable ? 2 : 3;
  b.soname = std::move(soname);
  b.has_dynamic = true;
  return b;
}

inline VersionDef verdef(std::string name, uint16_t index, bool base = false) {
  VersionDef d;
  d.name = std::move(name);
  d.index = index;
  d.base = base;
  return d;
}

inline VersionNeed verneed(std::string file, std::string version, uint16_t index, bool weak = false) {
  VersionNeed n;
  n.file = std::move(file);
  n.version = std::move(version);
  n.index = index;
  n.weak = weak;
  return n;
}

struct GraphBuilder {
  Graph graph;

  size_t add(const std::string& path, Binary binary) {
    Object o;
    o.path = path;
    o.realpath = path;
    binary.path = path;
    o.binary = std::make_shared<const Binary>(std::move(binary));
    o.inode = graph.objects.size() + 1;
    graph.objects.push_back(std::move(o));
    return graph.objects.size() - 1;
  }

  size_t add_unreadable(const std::string& path) {
    Object o;
    o.path = path;
    o.realpath = path;
    o.read_error = "truncated ELF header";
    graph.objects.push_back(std::move(o));
    return graph.objects.size() - 1;
  }

  void edge(size_t from, const std::string& name, std::optional<size_t> to, How how = How::Runpath,
            EdgeKind kind = EdgeKind::Needed, size_t root = 0) {
    Edge e;
    e.from = from;
    e.name = name;
    e.to = to;
    e.kind = kind;
    e.how = to ? how : How::NotFound;
    e.root = root;
    graph.edges.push_back(std::move(e));
  }

  // Adds a root with the given load order (the root first).
  size_t root(std::vector<size_t> order) {
    graph.roots.push_back(order.front());
    graph.load_order.push_back(std::move(order));
    return graph.roots.size() - 1;
  }
};

// Runs one check over a builder's graph with a target.
struct CheckRun {
  Matrix matrix;
  std::unique_ptr<FileSystem> fs = make_real_fs();
  Target target;
  const ShippedLibraries* shipped = nullptr;

  template <class F>
  std::vector<Finding> run(const Graph& graph, F check) {
    CheckContext ctx{graph, matrix, target, *fs};
    ctx.shipped = shipped;
    SymbolIndex symbols(graph);
    return check(ctx, symbols);
  }
};

inline std::vector<Finding> with_code(const std::vector<Finding>& all, const std::string& code) {
  std::vector<Finding> out;
  for (const Finding& f : all)
    if (f.code == code) out.push_back(f);
  return out;
}

}  // namespace depscan::test
