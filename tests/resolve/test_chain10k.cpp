// A 10,000-library NEEDED chain resolves without deep recursion and with work linear in its
// length: each library is a copy of one tiny template with its soname and NEEDED digits stamped
// in. The work is counted in file-system questions, which do not depend on the machine's load.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "counting_fs.h"
#include "resolve_support.h"
#include "toolchains.h"

namespace depscan::test {
namespace {

// Files in the graph, by device and inode: one file reached by several paths is read once.
long distinct_files(const Graph& graph) {
  std::set<std::pair<uint64_t, uint64_t>> files;
  for (const Object& o : graph.objects) files.insert({o.device, o.inode});
  return static_cast<long>(files.size());
}

}  // namespace

TEST_CASE("a chain of 10,000 libraries") {
  constexpr int kCount = 10000;
  std::ifstream in(resolve_fixture("big/libchain00000.so"), std::ios::binary);
  std::ostringstream buf;
  buf << in.rdbuf();
  const std::string tmpl = buf.str();
  REQUIRE(!tmpl.empty());
  size_t soname_at = tmpl.find("libchain00000.so");
  size_t needed_at = tmpl.find("libchain00001.so");
  REQUIRE(soname_at != std::string::npos);
  REQUIRE(needed_at != std::string::npos);
  TempDir dir("chain10k");
  for (int i = 0; i < kCount; ++i) {
    std::string copy = tmpl;
    copy.replace(soname_at + 8, 5, fmt::format("{:05d}", i));
    copy.replace(needed_at + 8, 5, fmt::format("{:05d}", i + 1));
    std::ofstream(dir.path() / fmt::format("libchain{:05d}.so", i), std::ios::binary) << copy;
  }
  CountingFs fs;
  BinaryCache cache(fs);
  Resolver resolver(cache, ResolveOptions{clean_environment(), {}});
  size_t root = resolver.add_root((dir.path() / "libchain00000.so").string());
  const Graph& graph = resolver.graph();
  MESSAGE("10,000-library chain: " << fs.opens.load() << " opens, " << fs.canonicals.load() << " canonical, " << fs.stats.load() << " stat, " << fs.listings.load() << " list, " << fs.head_reads.load() << " head reads");
  CHECK(graph.load_order[root].size() == kCount);
  CHECK(graph.objects[graph.load_order[root].back()].path == (dir.path() / "libchain09999.so").string());
  CHECK(graph.edges.back().name == "libchain10000.so");
  CHECK_FALSE(graph.edges.back().to.has_value());
  CHECK(fs.opens.load() == distinct_files(graph));  // each file read once
  CHECK(fs.probes() <= 8 * kCount);
}

TEST_CASE("the CUDA library set reads each file once") {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/usr/local/cuda/lib64", ec)) {
    std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && name.find(".so") != std::string::npos) files.push_back(entry.path().string());
  }
  if (!present_or_skip(!files.empty(), "the CUDA libraries in /usr/local/cuda/lib64")) return;
  CountingFs fs;
  BinaryCache cache(fs);
  Resolver resolver(cache, ResolveOptions{clean_environment(), {}});
  for (const std::string& f : files) resolver.add_root(f);
  const Graph& graph = resolver.graph();
  size_t missing = 0;
  // libnvtx3interop.so names an auxiliary filtee "visibility=hidden" (-f visibility=hidden reached the
  // linker): the loader searches for it and goes on without it.
  for (const Edge& e : graph.edges) missing += e.to || e.ignored_when_missing() ? 0 : 1;
  MESSAGE(files.size() << " CUDA libraries, " << graph.objects.size() << " objects, " << graph.edges.size()
                       << " edges, " << missing << " missing, " << fs.opens.load() << " opens, " << fs.canonicals.load() << " canonical, " << fs.stats.load() << " stat, " << fs.listings.load() << " list, " << fs.head_reads.load() << " head reads");
  CHECK(missing == 0);
  CHECK(fs.opens.load() == distinct_files(graph));
  CHECK(fs.probes() <= 8 * static_cast<long>(graph.edges.size() + files.size()));
}

}  // namespace depscan::test
