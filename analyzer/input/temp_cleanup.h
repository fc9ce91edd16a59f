// Temporary directories removed when depscan is stopped by a signal (Ctrl-C, a CI job's timeout,
// `kill`): an unpacked image can hold gigabytes. Only async-signal-safe calls run in the handler.
#pragma once

namespace depscan {

// Registers `path` (an absolute directory) to be removed if SIGINT, SIGTERM or SIGHUP ends the
// process; installs the handlers on first use. Returns a slot for forget_on_signal, or -1 when
// all slots are taken (the directory is then only removed by its owner).
int remove_on_signal(const char* path);
void forget_on_signal(int slot);

}  // namespace depscan
