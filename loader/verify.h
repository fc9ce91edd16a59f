// Runtime confirmation (--verify): a child process loads cuDNN and the driver as the
// application would, runs a kernel and a cuDNN operation, and reports each step; the parent
// compares what happened with the static prediction.
#pragma once

namespace depscan {}  // namespace depscan
