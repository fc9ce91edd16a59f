#include "loader/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

namespace depscan {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kStderrKeep = 4096;
constexpr size_t kMaxEventLine = size_t{1} << 20;  // the probe's own lines hold at most tens of kilobytes

struct Pipe {
  int read = -1, write = -1;
  // Both ends close-on-exec and above the standard descriptors, so dup2 onto 2 or 3 never
  // meets itself and nothing else leaks into the child.
  bool open() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return false;
    read = ::fcntl(fds[0], F_DUPFD_CLOEXEC, 10);
    write = ::fcntl(fds[1], F_DUPFD_CLOEXEC, 10);
    ::close(fds[0]);
    ::close(fds[1]);
    return read >= 0 && write >= 0;
  }
  void close_read() { if (read >= 0) ::close(read); read = -1; }
  void close_write() { if (write >= 0) ::close(write); write = -1; }
};

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (const std::string& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

pid_t spawn(const std::string& program, const std::vector<std::string>& argv, const std::vector<std::string>& env,
            Pipe& events, Pipe& errors, std::string& error) {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, errors.write, 2);
  posix_spawn_file_actions_adddup2(&actions, events.write, kProbeEventFd);
  sigset_t defaults, empty;
  sigemptyset(&empty);
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGSEGV, SIGBUS, SIGABRT, SIGCHLD}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  auto args = c_strings(argv);
  auto envp = c_strings(env);
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, program.c_str(), &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    error = fmt::format("cannot start {}: {}", program, std::strerror(rc));
    return -1;
  }
  return pid;
}

void record_status(ChildRun& run, int status) {
  if (WIFEXITED(status)) {
    run.exited = true;
    run.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    run.signal = WTERMSIG(status);
  }
}

// Events are lines of JSON on kProbeEventFd. The libraries the child loads could write there
// too: a line longer than kMaxEventLine is dropped up to its newline instead of being kept, and
// the lines after kMaxProbeEvents events are counted, not decoded.
class EventReader {
 public:
  explicit EventReader(ChildRun& run) : run_(run) {}
  // Returns true when a start event arrived (the step clock restarts).
  bool feed(const char* data, size_t n) {
    bool started = false;
    std::string_view in(data, n);
    while (!in.empty()) {
      size_t nl = in.find('\n');
      if (!dropping_) line_.append(in.substr(0, nl));
      if (nl == std::string_view::npos) {
        if (line_.size() > kMaxEventLine) drop_line();
        break;
      }
      if (!dropping_) started = take(line_) || started;
      line_.clear();
      dropping_ = false;
      in.remove_prefix(nl + 1);
    }
    return started;
  }

 private:
  void drop_line() {
    std::string().swap(line_);  // give the memory back, not only the length
    dropping_ = true;
  }

  bool take(std::string_view line) {
    if (run_.events.size() >= kMaxProbeEvents) {
      ++run_.lines_ignored;
      return false;
    }
    auto event = decode_event(line);
    if (!event) return false;
    bool started = event->is_start;
    if (started) run_.open_step = *event;
    else run_.open_step.reset();
    run_.events.push_back(std::move(*event));
    return started;
  }

  ChildRun& run_;
  std::string line_;       // the line being received, up to its newline
  bool dropping_ = false;  // inside a line that outgrew kMaxEventLine
};

void kill_group(pid_t pid) {
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
}

// `limit` after `t`, a limit past a century taken as one: steady_clock's nanoseconds end at 292 years.
Clock::time_point after(Clock::time_point t, std::chrono::milliseconds limit) {
  constexpr std::chrono::milliseconds kCentury = std::chrono::hours(24 * 365 * 100);
  return t + std::min(limit, kCentury);
}

// Polls wake up at least this often to see whether the probe has exited.
constexpr long long kExitCheckMs = 100;

int remaining_ms(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, kExitCheckMs));
}

// One read from a readable pipe: events go to the reader, stderr to its tail; closed at its end.
// Returns true when a start event arrived.
bool take_input(Pipe& pipe, bool is_events, EventReader& reader, ChildRun& run) {
  char buf[8192];
  ssize_t n = ::read(pipe.read, buf, sizeof buf);
  if (n < 0 && errno == EINTR) return false;
  if (n <= 0) {
    pipe.close_read();
    return false;
  }
  if (is_events) return reader.feed(buf, static_cast<size_t>(n));
  run.stderr_tail.append(buf, static_cast<size_t>(n));
  if (run.stderr_tail.size() > kStderrKeep) run.stderr_tail.erase(0, run.stderr_tail.size() - kStderrKeep);
  return false;
}

// The probe has exited, but a process it started may hold the pipes open: read what they hold
// now, and at most 128 reads (1 MiB, what a pipe holds at most) of each, as it may go on writing.
void drain(Pipe& events, Pipe& errors, EventReader& reader, ChildRun& run) {
  for (Pipe* pipe : {&events, &errors}) {
    for (int reads = 0; pipe->read >= 0 && reads < 128; ++reads) {
      pollfd fd = {pipe->read, POLLIN, 0};
      if (::poll(&fd, 1, 0) <= 0) break;
      take_input(*pipe, pipe == &events, reader, run);
    }
  }
}

void pump(pid_t pid, Pipe& events, Pipe& errors, const ChildLimits& limits, ChildRun& run) {
  EventReader reader(run);
  Clock::time_point start = Clock::now(), overall = after(start, limits.total_timeout);
  Clock::time_point step_deadline = after(start, limits.step_timeout);
  while (events.read >= 0 || errors.read >= 0) {
    // The pipes' end does not tell that the probe is gone: a process it started may hold them.
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      drain(events, errors, reader, run);
      return record_status(run, status);
    }
    Clock::time_point now = Clock::now();
    if (now >= overall || now >= step_deadline) {
      run.timeout = now >= overall ? "overall" : "step";
      kill_group(pid);
      return;
    }
    pollfd fds[2] = {{events.read, POLLIN, 0}, {errors.read, POLLIN, 0}};
    int ready = ::poll(fds, 2, remaining_ms(std::min(overall, step_deadline)));
    if (ready < 0 && errno != EINTR) return;
    for (int i = 0; i < 2 && ready > 0; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      bool started = take_input(i == 0 ? events : errors, i == 0, reader, run);
      if (started) step_deadline = after(Clock::now(), limits.step_timeout);
    }
  }
}

// The pipes are closed; the child should be exiting. Wait for it, but not past the deadline, and
// after SIGKILL not past the grace: a process in uninterruptible sleep in the driver (a GPU that
// fell off the bus) does not die of it, and must not hang depscan.
void reap(pid_t pid, const ChildLimits& limits, Clock::time_point start, ChildRun& run) {
  if (run.exited || run.signal) return;
  Clock::time_point deadline =
      run.timeout.empty() ? after(start, limits.total_timeout) : after(Clock::now(), limits.kill_grace);
  int status = 0;
  while (true) {
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return record_status(run, status);
    if (r < 0 && errno != EINTR) return;
    if (Clock::now() >= deadline) {
      if (!run.timeout.empty()) {
        run.unkillable = true;
        return;
      }
      run.timeout = "overall";
      kill_group(pid);
      deadline = after(Clock::now(), limits.kill_grace);
    }
    ::usleep(10000);
  }
}

// With SIGCHLD ignored (a disposition inherited across exec) the kernel reaps the probe itself
// and waitpid fails with ECHILD: the default disposition holds while the probe runs.
class DefaultSigchld {
 public:
  DefaultSigchld() {
    struct sigaction dfl = {};
    dfl.sa_handler = SIG_DFL;
    saved_ = ::sigemptyset(&dfl.sa_mask) == 0 && ::sigaction(SIGCHLD, &dfl, &previous_) == 0;
  }
  ~DefaultSigchld() {
    if (saved_) ::sigaction(SIGCHLD, &previous_, nullptr);
  }
  DefaultSigchld(const DefaultSigchld&) = delete;
  DefaultSigchld& operator=(const DefaultSigchld&) = delete;

 private:
  struct sigaction previous_ = {};
  bool saved_ = false;
};

}  // namespace

ChildRun run_child(const std::string& program, const std::vector<std::string>& args,
                   const std::vector<std::string>& environment, const ChildLimits& limits) {
  ChildRun run;
  Pipe events, errors;
  if (!events.open() || !errors.open()) {
    run.spawn_error = fmt::format("cannot create pipes: {}", std::strerror(errno));
    return run;
  }
  DefaultSigchld sigchld;
  Clock::time_point start = Clock::now();
  pid_t pid = spawn(program, args, environment, events, errors, run.spawn_error);
  events.close_write();
  errors.close_write();
  if (pid > 0) {
    pump(pid, events, errors, limits, run);
    reap(pid, limits, start, run);
  }
  events.close_read();
  errors.close_read();
  run.milliseconds = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  return run;
}

}  // namespace depscan
