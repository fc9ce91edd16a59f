#include "report/json_writer.h"

#include <fmt/format.h>

#include "analyzer/util/strings.h"

namespace depscan {

void JsonWriter::indent(size_t depth) { out_.append(2 * depth, ' '); }

void JsonWriter::next_item() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (items_.empty()) return;
  out_ += items_.back()++ == 0 ? "\n" : ",\n";
  indent(items_.size());
}

void JsonWriter::open(char bracket) {
  next_item();
  out_ += bracket;
  items_.push_back(0);
}

void JsonWriter::close(char bracket) {
  size_t items = items_.back();
  items_.pop_back();
  if (items > 0) {
    out_ += '\n';
    indent(items_.size());
  }
  out_ += bracket;
}

void JsonWriter::key(std::string_view name) {
  next_item();
  quoted(name);
  out_ += ": ";
  after_key_ = true;
}

namespace {

// Printable ASCII with nothing to escape: almost every name and path, copied as is.
bool needs_no_escaping(std::string_view text) {
  for (char c : text) {
    auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x80 || c == '"' || c == '\\') return false;
  }
  return true;
}

}  // namespace

// nlohmann's escaping with ensure_ascii off: the two-character escapes, \u00xx for the other
// control characters, everything else as is (invalid UTF-8 first replaced by U+FFFD).
void JsonWriter::quoted(std::string_view raw) {
  out_ += '"';
  if (needs_no_escaping(raw)) {
    out_ += raw;
    out_ += '"';
    return;
  }
  for (char c : valid_utf8(raw)) {
    switch (c) {
      case '"': out_ += "\\\""; break;
      case '\\': out_ += "\\\\"; break;
      case '\b': out_ += "\\b"; break;
      case '\f': out_ += "\\f"; break;
      case '\n': out_ += "\\n"; break;
      case '\r': out_ += "\\r"; break;
      case '\t': out_ += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) out_ += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        else out_ += c;
    }
  }
  out_ += '"';
}

void JsonWriter::value(std::string_view text) {
  next_item();
  quoted(text);
}

void JsonWriter::value(uint64_t number) {
  next_item();
  out_ += fmt::format("{}", number);
}

void JsonWriter::value(bool flag) {
  next_item();
  out_ += flag ? "true" : "false";
}

void JsonWriter::null() {
  next_item();
  out_ += "null";
}

void JsonWriter::raw_pretty(std::string_view dumped) {
  next_item();
  std::string pad = "\n" + std::string(2 * items_.size(), ' ');
  for (char c : dumped) {
    if (c == '\n') out_ += pad;
    else out_ += c;
  }
}

std::string JsonWriter::take() {
  out_ += '\n';
  return std::move(out_);
}

}  // namespace depscan
