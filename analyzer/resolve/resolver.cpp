#include "analyzer/resolve/resolve.h"

namespace depscan {

LoaderEnvironment default_environment() { return LoaderEnvironment{}; }

struct Resolver::Impl {
  BinaryCache& cache;
  ResolveOptions options;
  Graph graph;
  std::vector<Finding> diagnostics;
};

Resolver::Resolver(BinaryCache& cache, ResolveOptions options)
    : impl_(std::make_unique<Impl>(Impl{cache, std::move(options), {}, {}})) {}
Resolver::~Resolver() = default;

size_t Resolver::add_root(const std::string& logical_path) {
  Object obj;
  obj.path = logical_path;
  obj.realpath = logical_path;
  auto bin = impl_->cache.get(logical_path);
  if (bin) obj.binary = *bin; else obj.read_error = bin.error();
  impl_->graph.objects.push_back(std::move(obj));
  impl_->graph.roots.push_back(impl_->graph.objects.size() - 1);
  impl_->graph.load_order.push_back({impl_->graph.objects.size() - 1});
  return impl_->graph.roots.size() - 1;
}

size_t Resolver::add_dlopen(size_t, size_t, const std::string&, bool, const std::string&) { return 0; }
std::vector<Attempt> Resolver::explain(size_t, size_t, const std::string&) const { return {}; }
const Graph& Resolver::graph() const { return impl_->graph; }
Graph Resolver::take_graph() { return std::move(impl_->graph); }
const std::vector<Finding>& Resolver::diagnostics() const { return impl_->diagnostics; }

}  // namespace depscan
