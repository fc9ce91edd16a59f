// The GLIBC_TUNABLES of the target process, for the tunables that change what the loader accepts.
// Read as ld.so reads them (elf/dl-tunables.c): "name=value:name=value", the last value of a name
// counts, a value out of the tunable's range is ignored, and a malformed string is ignored whole.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace depscan {

struct GlibcTunables {
  std::optional<uint64_t> optional_static_tls;  // glibc.rtld.optional_static_tls (glibc 2.32 and later)
  std::optional<uint64_t> nns;                  // glibc.rtld.nns: 1 to 16 (glibc 2.32 and later)
  // glibc.rtld.execstack as written (2.41 and later take 0 or 1, 2.42 and later also 2: the caller
  // knows the release).
  std::optional<uint64_t> execstack;

  // The static TLS surplus these give (elf/dl-tls.c): 144 bytes of libc and 144 of other libraries'
  // initial-exec TLS per namespace, the optional part, and the legacy 144.
  uint64_t static_tls_surplus() const;
};

GlibcTunables parse_glibc_tunables(std::string_view text);

}  // namespace depscan
