#include "analyzer/input/temp_cleanup.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>

namespace depscan {
namespace {

constexpr int kSlots = 16;
constexpr size_t kPathBytes = 4096;
constexpr int kMaxDepth = 128;  // archive members nest at most 100 directories deep

struct Slot {
  std::atomic<bool> used{false};
  char path[kPathBytes];
};
Slot slots[kSlots];

struct LinuxDirent64 {
  ino64_t d_ino;
  off64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1];
};

void remove_contents(int dir_fd, int depth);

bool remove_entry(int dir_fd, const char* name, int depth) {
  if (::unlinkat(dir_fd, name, 0) == 0) return true;
  if (depth >= kMaxDepth) return false;
  int fd = ::openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  remove_contents(fd, depth + 1);
  ::close(fd);
  return ::unlinkat(dir_fd, name, AT_REMOVEDIR) == 0;
}

// getdents64 rather than readdir: opendir allocates, which a signal handler must not do. Entries
// removed while listing may shift the rest, so the directory is listed again while a pass removes
// something.
void remove_contents(int dir_fd, int depth) {
  alignas(8) char buf[2048];
  for (bool removed = true; removed;) {
    removed = false;
    ::lseek(dir_fd, 0, SEEK_SET);
    long n;
    while ((n = ::syscall(SYS_getdents64, dir_fd, buf, sizeof buf)) > 0) {
      for (long at = 0; at < n;) {
        auto* entry = reinterpret_cast<LinuxDirent64*>(buf + at);
        at += entry->d_reclen;
        const char* name = entry->d_name;
        if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) continue;
        removed = remove_entry(dir_fd, name, depth) || removed;
      }
    }
  }
}

void on_signal(int sig) {
  for (Slot& slot : slots) {
    if (!slot.used.load()) continue;
    int fd = ::open(slot.path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
      remove_contents(fd, 0);
      ::close(fd);
    }
    ::rmdir(slot.path);
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void install_handlers() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&action.sa_mask, sig);  // one removal at a time
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    // a signal the caller ignores (nohup, a shell's background job) stays ignored
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    ::sigaction(sig, &action, nullptr);
  }
}

}  // namespace

int remove_on_signal(const char* path) {
  static std::once_flag installed;
  std::call_once(installed, install_handlers);
  if (std::strlen(path) >= kPathBytes) return -1;
  static std::mutex claiming;
  std::lock_guard lock(claiming);
  for (int i = 0; i < kSlots; ++i) {
    if (slots[i].used.load()) continue;
    std::strcpy(slots[i].path, path);
    slots[i].used.store(true);
    return i;
  }
  return -1;
}

void forget_on_signal(int slot) {
  if (slot >= 0 && slot < kSlots) slots[slot].used.store(false);
}

}  // namespace depscan
