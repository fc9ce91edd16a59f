#include "analyzer/read/deep_read.h"

#include "analyzer/input/sniff.h"
#include "analyzer/read/lief_elf_reader.h"
#include "analyzer/read/pe_reader.h"
#include "analyzer/read/read.h"

namespace depscan {

Expected<Binary> read_binary_deep(const FileSystem& fs, std::string_view logical) {
  auto sniffed = sniff(fs, logical);  // refuses FIFOs and devices before LIEF can block on them
  if (!sniffed) return Error{sniffed.error()};
  auto host = fs.host_path(logical);
  if (!host) return Error{host.error()};
  std::string path(logical);
  if (sniffed->format == FileFormat::Elf) {
    auto lief = read_elf_with_lief(*host, path);
    if (lief) return lief;
    // LIEF 0.9 stops at about 1,000 dynamic entries; the mapped reader, which the tests hold to
    // LIEF's model, reads such a file in full
    auto mapped = read_binary(fs, logical);
    if (mapped) return **mapped;
    return lief;
  }
  if (sniffed->format == FileFormat::Pe) return read_pe(*host, path);
  return Error{"not an ELF or PE file"};
}

}  // namespace depscan
