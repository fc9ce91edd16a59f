#include "analyzer/check/baselines.h"

#include <nlohmann/json.hpp>

#include "matrix/embedded.h"

namespace depscan {

Expected<std::vector<Baseline>> load_baselines() {
  std::string_view text = embedded_file("baselines.json");
  auto doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.contains("baselines") || !doc["baselines"].is_array())
    return Error{"baselines.json: not a baseline table"};
  std::vector<Baseline> out;
  for (const auto& row : doc["baselines"]) {
    if (!row.is_object()) return Error{"baselines.json: a row is not an object"};
    Baseline b{row.value("name", ""), row.value("glibc", ""), row.value("glibcxx", ""),
               row.value("cxxabi", ""), row.value("source", "")};
    if (b.name.empty() || b.glibc.empty() || b.source.empty())
      return Error{"baselines.json: row '" + b.name + "' lacks a name, glibc or source"};
    out.push_back(std::move(b));
  }
  return out;
}

std::optional<Baseline> find_baseline(std::string_view name) {
  auto all = load_baselines();
  if (!all) return std::nullopt;
  for (Baseline& b : *all)
    if (b.name == name) return std::move(b);
  return std::nullopt;
}

std::string known_baseline_or_error(std::string_view name) {
  auto all = load_baselines();
  if (!all) return all.error();
  std::string known;
  for (const Baseline& b : *all) {
    if (b.name == name) return "";
    known += (known.empty() ? "" : ", ") + b.name;
  }
  return "unknown target '" + std::string(name) + "' (known: " + known + ")";
}

}  // namespace depscan
