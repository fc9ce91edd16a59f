// One file opened by several paths (site-packages/tensorflow/python/util/../../../nvidia/cudnn/lib/x
// and .../tpu/../../../nvidia/cudnn/lib/x) is several objects, as $ORIGIN needs; what is wrong
// with it is said once.
#pragma once

#include "analyzer/model.h"

namespace depscan {

// Drops a finding that says what an earlier one says about the same file, once the paths in both
// are written without "/../" and "/./" detours.
void merge_findings_on_one_file(ScanResult& result);

}  // namespace depscan
