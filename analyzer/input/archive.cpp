#include "analyzer/input/archive.h"

#include "analyzer/input/libarchive_api.h"

#include <locale.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include <fmt/format.h>

namespace depscan {
namespace {

// "./" (or "."), the entry `tar -C DIR -c .` writes for DIR itself.
bool names_the_root(std::string_view name) {
  return !name.empty() && name.front() != '/' && name.find_first_not_of("./") == std::string_view::npos &&
         name.find("..") == std::string_view::npos;
}

constexpr size_t kBlock = 1 << 16;

// libarchive converts a member's name from the archive's charset (UTF-8: a wheel's zip flag, a pax
// header) to the locale's, and in the C locale a name with a non-ASCII character converts to
// nothing. This thread reads the names in glibc's built-in C.UTF-8 locale.
class Utf8Names {
 public:
  Utf8Names() {
    static const locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", nullptr);
    if (utf8) previous_ = uselocale(utf8);
  }
  ~Utf8Names() {
    if (previous_) uselocale(previous_);
  }
  Utf8Names(const Utf8Names&) = delete;
  Utf8Names& operator=(const Utf8Names&) = delete;

 private:
  locale_t previous_ = nullptr;
};

MemberKind kind_of(const LibArchiveApi& la, struct archive_entry* entry) {
  if (la.entry_hardlink(entry)) return MemberKind::Hardlink;
  switch (la.entry_filetype(entry)) {
    case AE_IFREG: return MemberKind::File;
    case AE_IFDIR: return MemberKind::Directory;
    case AE_IFLNK: return MemberKind::Symlink;
    default: return MemberKind::Other;
  }
}

bool write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// An ELF file, or a PE file (a DOS header whose e_lfanew, at 0x3c, points to "PE\0\0" within
// `data`): what a wheel install keeps.
bool starts_like_a_binary(const char* data, size_t size) {
  if (size >= 4 && std::memcmp(data, "\x7f" "ELF", 4) == 0) return true;
  if (size < 64 || std::memcmp(data, "MZ", 2) != 0) return false;
  uint32_t pe_offset = 0;
  std::memcpy(&pe_offset, data + 0x3c, sizeof pe_offset);  // little-endian, as this host
  return pe_offset <= size - 4 && std::memcmp(data + pe_offset, "PE\0\0", 4) == 0;
}

}  // namespace

std::string human_bytes(uint64_t bytes) {
  if (bytes >= (1ull << 30)) return fmt::format("{:.1f} GiB", bytes / double(1ull << 30));
  if (bytes >= (1ull << 20)) return fmt::format("{:.1f} MiB", bytes / double(1ull << 20));
  return fmt::format("{} bytes", bytes);
}

Expected<std::unique_ptr<ArchiveReader>> ArchiveReader::open(const std::string& host_path,
                                                             std::string display, ArchiveLimits limits) {
  struct stat st;
  if (::stat(host_path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return Error{fmt::format("{}: not a readable regular file", display)};
  auto api = libarchive_api();
  if (!api) return Error{fmt::format("{}: {}", display, api.error())};
  const LibArchiveApi& la = **api;
  std::unique_ptr<ArchiveReader> reader(new ArchiveReader());
  reader->api_ = &la;
  reader->display_ = std::move(display);
  reader->limits_ = limits;
  reader->archive_size_ = static_cast<uint64_t>(st.st_size);
  Utf8Names utf8_names;
  reader->archive_ = la.read_new();
  la.support_format_zip(reader->archive_);
  la.support_format_tar(reader->archive_);
  la.support_format_gnutar(reader->archive_);
  la.support_filter_all(reader->archive_);
  if (la.open_filename(reader->archive_, host_path.c_str(), kBlock) != ARCHIVE_OK)
    return Error{fmt::format("{}: {}", reader->display_, la.error_string(reader->archive_))};
  return reader;
}

ArchiveReader::~ArchiveReader() {
  if (archive_) api_->read_free(archive_);
}

void ArchiveReader::add(const char* code, Severity severity, const std::string& message) {
  findings_.push_back({code, severity, std::nullopt, fmt::format("{}: {}", display_, message), "", display_});
}

void ArchiveReader::fail(const char* code, const std::string& message) {
  add(code, Severity::Error, message);
  failed_ = true;
}

bool ArchiveReader::over_total(uint64_t bytes) const {
  uint64_t ratio_cap = std::max(limits_.ratio_floor, limits_.max_ratio * std::max<uint64_t>(archive_size_, 1));
  return bytes > limits_.max_total_bytes || bytes > ratio_cap;
}

std::optional<ArchiveMember> ArchiveReader::next() {
  const LibArchiveApi& la = *api_;
  Utf8Names utf8_names;
  while (!failed_) {
    struct archive_entry* entry = nullptr;
    int rc = la.next_header(archive_, &entry);
    if (rc == ARCHIVE_EOF) return std::nullopt;
    if (rc < ARCHIVE_WARN) {
      fail("archive-corrupt", fmt::format("unreadable after {} members: {}", members_,
                                          la.error_string(archive_) ? la.error_string(archive_) : "unknown error"));
      return std::nullopt;
    }
    member_read_ = 0;
    data_consumed_ = false;
    member_corrupt_ = false;
    if (++members_ > limits_.max_members) {
      fail("archive-too-many-members", fmt::format("more than {} members: refused", limits_.max_members));
      return std::nullopt;
    }
    const char* raw = la.entry_pathname(entry);
    if (!raw) raw = la.entry_pathname_utf8(entry);
    if (!raw) {
      add("archive-unsafe-member", Severity::Error,
          fmt::format("member {}: its name is not valid in the archive's character set: not extracted", members_));
      continue;
    }
    std::string raw_name = raw;
    MemberKind kind = kind_of(la, entry);
    if (names_the_root(raw_name) && kind == MemberKind::Directory) continue;  // nothing to extract
    auto name = safe_relative_name(raw_name);
    if (!name) {
      add("archive-unsafe-member", Severity::Error, name.error() + ": not extracted");
      continue;
    }
    ArchiveMember member{*name, kind, 0, "", static_cast<unsigned>(la.entry_perm(entry))};
    member_mode_ = member.mode;
    if (la.entry_size_is_set(entry) && la.entry_size(entry) > 0)
      member.size = static_cast<uint64_t>(la.entry_size(entry));
    if (la.entry_is_encrypted(entry)) {
      add("archive-encrypted-member", Severity::Error, fmt::format("'{}' is encrypted: not analysed", member.name));
      continue;
    }
    if (member.kind == MemberKind::Hardlink) {
      auto target = safe_relative_name(la.entry_hardlink(entry));
      if (!target) {
        add("archive-unsafe-member", Severity::Error,
            fmt::format("hard link '{}' points outside the archive ({}): not extracted", member.name, target.error()));
        continue;
      }
      member.link_target = *target;
    }
    if (member.kind == MemberKind::Symlink) {
      const char* target = la.entry_symlink(entry);
      member.link_target = target ? target : "";
    }
    if (member.size > limits_.max_member_bytes) {
      add("archive-too-large", Severity::Error,
          fmt::format("'{}' declares {} (cap {}): not extracted", member.name, human_bytes(member.size),
                      human_bytes(limits_.max_member_bytes)));
      continue;
    }
    declared_total_ += member.size;
    if (over_total(declared_total_)) {
      fail("archive-too-large",
           fmt::format("members declare {} uncompressed from a {} archive (caps: {}x the archive size, {} in total): "
                       "refused as a probable zip bomb", human_bytes(declared_total_), human_bytes(archive_size_),
                       limits_.max_ratio, human_bytes(limits_.max_total_bytes)));
      return std::nullopt;
    }
    // In a wheel, which copy an installer writes depends on it and on the zip's layout: pip writes
    // the entry the central directory lists last, which need not be the last in the file that
    // libarchive reads; uv refuses a wheel whose copies differ. So install_wheel keeps any library copy.
    if (limits_.report_duplicates && !seen_.insert(member.name).second && member.kind != MemberKind::Directory) {
      add("archive-duplicate-member", Severity::Warning,
          fmt::format("'{}' appears more than once: {}", member.name, limits_.duplicate_rule));
    }
    return member;
  }
  return std::nullopt;
}

Expected<size_t> ArchiveReader::read_block(void* buf, size_t size) {
  const LibArchiveApi& la = *api_;
  la_ssize_t n = la.read_data(archive_, buf, size);
  if (n < 0) {
    std::string why = la.error_string(archive_) ? la.error_string(archive_) : "read error";
    // A member libarchive cannot decode (a bad CRC, an unknown compression method) is lost alone,
    // and the caller says so; after ARCHIVE_FATAL nothing more can be read.
    if (n == ARCHIVE_FATAL) fail("archive-corrupt", fmt::format("member data unreadable: {}", why));
    else member_corrupt_ = true;
    return Error{"data unreadable: " + why};
  }
  member_read_ += static_cast<uint64_t>(n);
  read_total_ += static_cast<uint64_t>(n);
  if (member_read_ > limits_.max_member_bytes || over_total(read_total_)) {
    fail("archive-too-large",
         fmt::format("a member inflates past its caps ({} read from a {} archive): refused as a probable zip bomb",
                     human_bytes(read_total_), human_bytes(archive_size_)));
    return Error{"size cap"};
  }
  return static_cast<size_t>(n);
}

Expected<bool> ArchiveReader::extract(SafeTree& tree, const std::string& rel, bool binaries_only) {
  if (data_consumed_) return Error{"member data already read"};
  data_consumed_ = true;
  std::vector<char> buf(kBlock);
  auto first = read_block(buf.data(), buf.size());
  if (!first) return Error{first.error()};
  if (binaries_only && !starts_like_a_binary(buf.data(), *first)) return false;
  // Its execute bits kept: the checks ask whether a program's interpreter may be executed. Always
  // readable by the scan.
  auto fd = tree.create_file(rel, (member_mode_ & 0755) | 0600);
  if (!fd) return Error{fd.error()};
  bool ok = write_all(*fd, buf.data(), *first);
  for (size_t n = *first; ok && n > 0;) {
    auto got = read_block(buf.data(), buf.size());
    if (!got) {
      ::close(*fd);
      tree.remove(rel);
      return Error{got.error()};
    }
    n = *got;
    ok = write_all(*fd, buf.data(), n);
  }
  ::close(*fd);
  if (!ok) {
    tree.remove(rel);
    return Error{fmt::format("cannot write '{}' (disk full?)", rel)};
  }
  return true;
}

Expected<std::string> ArchiveReader::read_all() {
  if (data_consumed_) return Error{"member data already read"};
  data_consumed_ = true;
  std::string out;
  std::vector<char> buf(kBlock);
  while (true) {
    auto got = read_block(buf.data(), buf.size());
    if (!got) return Error{got.error()};
    if (*got == 0) return out;
    out.append(buf.data(), *got);
    if (out.size() > limits_.max_small_read)
      return Error{fmt::format("larger than {}: not read", human_bytes(limits_.max_small_read))};
  }
}

}  // namespace depscan
