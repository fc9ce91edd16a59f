// Values a command keeps until the process exits instead of freeing them: the kernel takes all of
// a process's memory back at once, while freeing a scan's report and working tables block by
// block took a twelfth of the instructions of a tree of 31 CUDA libraries. They stay reachable
// from a static list, so leak checkers do not report them. For a program's last use of a value
// only, never in a loop.
#pragma once

#include <utility>

namespace depscan {

struct KeptUntilExit {
  KeptUntilExit* next = nullptr;
};

inline KeptUntilExit* kept_until_exit = nullptr;  // a plain pointer: nothing runs at exit

template <class T>
T& keep_until_exit(T value) {
  struct Holder : KeptUntilExit {
    T value;
    explicit Holder(T&& v) : value(std::move(v)) {}
  };
  auto* holder = new Holder(std::move(value));
  holder->next = kept_until_exit;
  kept_until_exit = holder;
  return holder->value;
}

}  // namespace depscan
