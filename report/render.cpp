#include "report/report.h"

#include "analyzer/input/fs.h"

namespace depscan {

std::string render(std::string_view format, const ScanReport& report, const TextOptions& options) {
  if (format == "json") return render_json(report);
  if (format == "sarif") return render_sarif(report, absolute_path("."));
  if (format == "junit") return render_junit(report, options.fail_on);
  if (format == "github") return render_github(report);
  return render_text(report, options);
}

}  // namespace depscan
