// What the dynamic loader has mapped into this process, as the loader itself reports it.
#pragma once

#include <set>
#include <string>
#include <vector>

namespace depscan {

// Every object in the process's link map (dl_iterate_phdr), by the path the loader opened.
std::vector<std::string> loaded_objects();

// The file the loader picked for a dlopen handle (dlinfo RTLD_DI_LINKMAP), or "" if unknown.
std::string handle_path(void* handle);

// Remembers what was loaded so far and answers what each step added.
class LoadTracker {
 public:
  LoadTracker();
  std::vector<std::string> newly_loaded();

 private:
  std::set<std::string> seen_;
};

}  // namespace depscan
