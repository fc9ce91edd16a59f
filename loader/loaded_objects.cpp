#include "loader/loaded_objects.h"

#include <dlfcn.h>
#include <link.h>

namespace depscan {
namespace {

int collect(struct dl_phdr_info* info, size_t, void* out) {
  auto* paths = static_cast<std::vector<std::string>*>(out);
  if (info->dlpi_name && info->dlpi_name[0] != '\0') paths->emplace_back(info->dlpi_name);
  return 0;
}

}  // namespace

std::vector<std::string> loaded_objects() {
  std::vector<std::string> paths;
  ::dl_iterate_phdr(collect, &paths);
  return paths;
}

std::string handle_path(void* handle) {
  struct link_map* map = nullptr;
  if (!handle || ::dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map || !map->l_name) return "";
  return map->l_name;
}

LoadTracker::LoadTracker() {
  for (std::string& p : loaded_objects()) seen_.insert(std::move(p));
}

std::vector<std::string> LoadTracker::newly_loaded() {
  std::vector<std::string> added;
  for (std::string& p : loaded_objects())
    if (seen_.insert(p).second) added.push_back(std::move(p));
  return added;
}

}  // namespace depscan
