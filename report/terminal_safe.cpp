#include <fmt/format.h>

#include "report/report.h"

namespace depscan {

std::string for_output(std::string_view format, std::string rendered, const TextOptions& options) {
  if (format == "text") return terminal_safe(rendered, options.color);
  if (format == "github") return terminal_safe(rendered, false);
  return rendered;
}

}  // namespace depscan
