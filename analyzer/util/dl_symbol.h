// Binding a function pointer to a symbol of a library opened with dlopen (libarchive, the CUDA
// driver, cuDNN): a symbol that is absent leaves the slot null and is added to `missing`.
#pragma once

#include <dlfcn.h>

#include <string>

namespace depscan {

template <typename Fn>
void bind_symbol(void* handle, const char* symbol, Fn& slot, std::string* missing) {
  slot = reinterpret_cast<Fn>(::dlsym(handle, symbol));
  if (!slot && missing) {
    if (!missing->empty()) *missing += ", ";
    *missing += symbol;
  }
}

}  // namespace depscan
