// Writes pretty JSON straight into a string, laid out exactly as nlohmann::json::dump(2) lays
// out the same document (keys must be given in sorted order, as its std::map holds them). The
// JSON report of the CUDA set is 780 KB: building it as a nlohmann document first took 4 of
// its 6 ms.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace depscan {

class JsonWriter {
 public:
  void begin_object() { open('{'); }
  void end_object() { close('}'); }
  void begin_array() { open('['); }
  void end_array() { close(']'); }
  void key(std::string_view name);
  void value(std::string_view text);
  void value(const char* text) { value(std::string_view(text)); }
  void value(uint64_t number);
  void value(bool flag);
  void null();
  void value_or_null(const std::optional<std::string>& text) { text ? value(std::string_view(*text)) : null(); }
  void value_or_null(const std::optional<size_t>& number) { number ? value(uint64_t{*number}) : null(); }
  // A document already laid out by nlohmann::json::dump(2), placed at the current position.
  void raw_pretty(std::string_view dumped);

  // Finishes the text (with the final newline of json_text()).
  std::string take();

 private:
  void open(char bracket);
  void close(char bracket);
  void next_item();  // the separator and indentation before a value or key
  void indent(size_t depth);
  void quoted(std::string_view text);

  std::string out_;
  std::vector<size_t> items_;  // per open level: values (arrays) or keys (objects) so far
  bool after_key_ = false;
};

}  // namespace depscan
