// Reads zip and tar archives (wheels, image archives, image layers) through libarchive without
// trusting them. Every member name is normalised and checked (safe_relative_name); sizes are
// capped per member, in total and against the archive's own size (compression ratio: zip bombs);
// the member count is capped; duplicates, encrypted and corrupt members become findings. Contents
// are only ever written through a SafeTree.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analyzer/input/safe_tree.h"
#include "analyzer/model.h"

struct archive;  // libarchive

namespace depscan {

struct LibArchiveApi;

// "1.5 GiB", "12.0 MiB", "512 bytes".
std::string human_bytes(uint64_t bytes);

struct ArchiveLimits {
  uint64_t max_member_bytes = 8ull << 30;   // one member, uncompressed
  uint64_t max_total_bytes = 64ull << 30;   // all members, uncompressed (declared or read)
  uint64_t max_ratio = 200;                 // uncompressed bytes per archive byte ...
  uint64_t ratio_floor = 64ull << 20;       // ... checked once past this many bytes
  size_t max_members = 500000;
  size_t max_small_read = 64ull << 20;      // RECORD, METADATA, manifest.json, ...
  bool report_duplicates = true;            // zip: a second copy is a finding; tar layers: normal
  // Which copy of a repeated name is used, for the finding (a wheel's rule by default).
  std::string duplicate_rule =
      "the last copy that is a library is analysed, if one is, else the last copy; installers differ on which copy "
      "they write (pip: the one the zip's central directory lists last; uv refuses the wheel when the copies differ)";
};

enum class MemberKind { File, Directory, Symlink, Hardlink, Other };

struct ArchiveMember {
  std::string name;          // normalised relative name
  MemberKind kind = MemberKind::Other;
  uint64_t size = 0;         // declared size
  std::string link_target;   // symlink: as written; hard link: normalised member name
  unsigned mode = 0644;
};

class ArchiveReader {
 public:
  // `display` names the archive in findings (usually the file name the user gave).
  static Expected<std::unique_ptr<ArchiveReader>> open(const std::string& host_path,
                                                       std::string display, ArchiveLimits limits = {});
  ~ArchiveReader();
  ArchiveReader(const ArchiveReader&) = delete;
  ArchiveReader& operator=(const ArchiveReader&) = delete;

  // The next member that passed the name checks; members refused are recorded as findings and
  // skipped. nullopt at the end, or when the archive cannot be read further (see failed()).
  std::optional<ArchiveMember> next();

  // Writes the current member (a File) into `tree` at `rel`, with its execute bits. With binaries_only, nothing is
  // written unless the data starts like an ELF or PE file (the ELF magic, or MZ). Returns whether a file was written.
  Expected<bool> extract(SafeTree& tree, const std::string& rel, bool binaries_only = false);
  // The current member's data, if it is at most limits.max_small_read bytes.
  Expected<std::string> read_all();

  bool failed() const { return failed_; }
  // The current member's data could not be decoded (a bad CRC, an unknown compression method):
  // the member is lost, the archive goes on.
  bool member_corrupt() const { return member_corrupt_; }
  // What the members read so far declare: their uncompressed bytes, and how many there are.
  uint64_t bytes_declared() const { return declared_total_; }
  size_t members() const { return members_; }
  uint64_t archive_size() const { return archive_size_; }
  const std::string& display() const { return display_; }
  std::vector<Finding>& findings() { return findings_; }

 private:
  ArchiveReader() = default;
  // Reads the next data block of the current member, charging it to the caps.
  Expected<size_t> read_block(void* buf, size_t size);
  void add(const char* code, Severity severity, const std::string& message);
  void fail(const char* code, const std::string& message);
  bool over_total(uint64_t bytes) const;

  const LibArchiveApi* api_ = nullptr;
  ::archive* archive_ = nullptr;
  std::string display_;
  ArchiveLimits limits_;
  uint64_t archive_size_ = 0;
  uint64_t declared_total_ = 0, read_total_ = 0, member_read_ = 0;
  size_t members_ = 0;
  bool failed_ = false;
  bool data_consumed_ = false;
  unsigned member_mode_ = 0644;  // the current member's permission bits
  bool member_corrupt_ = false;
  std::set<std::string> seen_;
  std::vector<Finding> findings_;
};

}  // namespace depscan
