// Every JSON document depscan prints goes through here. File names are any bytes, JSON strings
// are UTF-8: an invalid byte becomes U+FFFD instead of an exception that ended the process.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace depscan {

inline std::string json_text(const nlohmann::json& doc) {
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace depscan
