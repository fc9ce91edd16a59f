#include "analyzer/check/optional_modules.h"

#include <fmt/format.h>

#include "analyzer/check/per_file.h"
#include "matrix/matrix.h"

namespace depscan {
namespace {

void lower_errors_about(std::vector<Finding>& findings, const Graph& g, const std::string& file, const std::string& note,
                        const std::string& fix) {
  for (Finding& f : findings) {
    if (f.severity != Severity::Error || !finding_is_about(f, g, file)) continue;
    f.severity = Severity::Warning;
    f.message += note;
    f.fix = f.fix.empty() ? fix : fix + "; or " + f.fix;
  }
}

}  // namespace

void apply_optional_modules(std::vector<Finding>& findings, const CheckContext& ctx,
                            const std::vector<Distribution>& dists) {
  for (const Distribution& d : dists) {
    std::string name = normalize_dist_name(d.name);
    for (const std::string& file : d.files) {
      const OptionalModule* row = ctx.matrix.optional_module(name, relative_to_site_packages(d, file));
      if (!row) continue;
      lower_errors_about(findings, ctx.graph, file,
                         fmt::format("; {} {} imports this module only {} (optional)", d.name, d.version, row->why),
                         row->fix);
    }
  }
}

}  // namespace depscan
