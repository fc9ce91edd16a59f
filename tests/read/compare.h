// Field-by-field comparison of two Binary models, naming the first difference.
#pragma once

#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analyzer/model.h"

namespace depscan::test {

inline std::string describe(const Symbol& s) {
  return fmt::format("{} defined={} bind={} type={} vis={} version='{}' file='{}' hidden={} index={}", s.name,
                     s.defined, static_cast<int>(s.binding), static_cast<int>(s.type), s.visibility, s.version,
                     s.version_file, s.hidden, s.version_index);
}

inline std::string describe(const VersionNeed& n) {
  return fmt::format("{}:{} index={} weak={}", n.file, n.version, n.index, n.weak);
}

inline std::string describe(const VersionDef& d) {
  return fmt::format("{} index={} base={} parents=[{}]", d.name, d.index, d.base, fmt::join(d.parents, ","));
}

inline std::string describe(const Section& s) {
  return fmt::format("{} type={} flags={:#x} addr={:#x} off={:#x} size={:#x}", s.name, s.type, s.flags, s.addr,
                     s.offset, s.size);
}

inline std::string describe(const std::string& s) { return s; }
inline std::string describe(const FilteeName& f) { return f.name + (f.auxiliary ? " (auxiliary)" : " (filter)"); }
inline std::string describe(uint32_t index) { return std::to_string(index); }

template <class T>
std::string first_difference(const char* what, const std::vector<T>& a, const std::vector<T>& b) {
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    if (!(a[i] == b[i])) return fmt::format("{}[{}]: '{}' vs '{}'", what, i, describe(a[i]), describe(b[i]));
  if (a.size() != b.size()) return fmt::format("{}: {} entries vs {}", what, a.size(), b.size());
  return "";
}

inline std::string show(const std::optional<std::string>& s) { return s ? "'" + *s + "'" : "(none)"; }
inline std::string show(const std::optional<uint32_t>& v) { return v ? std::to_string(*v) : "(none)"; }

// Empty when the two models agree on everything both readers fill; else the first difference.
// `with_sections` also compares the section table.
inline std::string model_difference(const Binary& a, const Binary& b, bool with_sections = true) {
  auto scalar = [](const char* what, auto x, auto y) {
    return x == y ? std::string() : fmt::format("{}: {} vs {}", what, x, y);
  };
  for (std::string d : {scalar("bits", a.bits, b.bits), scalar("little_endian", a.little_endian, b.little_endian),
                        scalar("machine", a.machine, b.machine), scalar("file_type", a.file_type, b.file_type),
                        scalar("os_abi", a.os_abi, b.os_abi), scalar("interpreter", a.interpreter, b.interpreter),
                        scalar("PT_GNU_STACK", show(a.stack_flags), show(b.stack_flags)),
                        scalar("PT_LOAD congruence", a.load_congruence, b.load_congruence),
                        scalar("PT_LOAD alignment", a.load_alignment, b.load_alignment),
                        scalar("PT_TLS size", a.tls_size, b.tls_size), scalar("PT_TLS align", a.tls_align, b.tls_align),
                        scalar("PT_TLS first byte", a.tls_first_byte, b.tls_first_byte),
                        scalar("x86 ISA needed", a.x86_isa_needed, b.x86_isa_needed),
                        first_difference("static TLS relocation symbols", a.static_tls_symbols, b.static_tls_symbols),
                        scalar("has_dynamic", a.has_dynamic, b.has_dynamic),
                        scalar("soname", show(a.soname), show(b.soname)), first_difference("needed", a.needed, b.needed),
                        first_difference("filtees", a.filtees, b.filtees),
                        scalar("rpath", show(a.rpath), show(b.rpath)), scalar("runpath", show(a.runpath), show(b.runpath)),
                        scalar("DT_FLAGS", a.dt_flags, b.dt_flags), scalar("DT_FLAGS_1", a.dt_flags_1, b.dt_flags_1),
                        scalar("DT_BIND_NOW", a.has_dt_bind_now, b.has_dt_bind_now),
                        first_difference("version_needs", a.version_needs, b.version_needs),
                        first_difference("version_defs", a.version_defs, b.version_defs),
                        first_difference("symbols", a.symbols, b.symbols)})
    if (!d.empty()) return d;
  if (with_sections) return first_difference("sections", a.sections, b.sections);
  return "";
}

}  // namespace depscan::test
