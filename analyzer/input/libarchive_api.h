// libarchive, opened with dlopen on the first archive. Linked, it and what it needs (ICU,
// libxml2, nettle, zstd, ...) cost every run about 1.5 ms of start-up, archives or not.
#pragma once

#include <archive.h>
#include <archive_entry.h>

#include "analyzer/util/expected.h"

namespace depscan {

struct LibArchiveApi {
  decltype(&::archive_read_new) read_new = nullptr;
  decltype(&::archive_read_free) read_free = nullptr;
  decltype(&::archive_read_support_format_zip) support_format_zip = nullptr;
  decltype(&::archive_read_support_format_tar) support_format_tar = nullptr;
  decltype(&::archive_read_support_format_gnutar) support_format_gnutar = nullptr;
  decltype(&::archive_read_support_filter_all) support_filter_all = nullptr;
  decltype(&::archive_read_open_filename) open_filename = nullptr;
  decltype(&::archive_read_next_header) next_header = nullptr;
  decltype(&::archive_read_data) read_data = nullptr;
  decltype(&::archive_error_string) error_string = nullptr;
  decltype(&::archive_entry_filetype) entry_filetype = nullptr;
  decltype(&::archive_entry_hardlink) entry_hardlink = nullptr;
  decltype(&::archive_entry_is_encrypted) entry_is_encrypted = nullptr;
  decltype(&::archive_entry_pathname) entry_pathname = nullptr;
  decltype(&::archive_entry_pathname_utf8) entry_pathname_utf8 = nullptr;
  decltype(&::archive_entry_perm) entry_perm = nullptr;
  decltype(&::archive_entry_size) entry_size = nullptr;
  decltype(&::archive_entry_size_is_set) entry_size_is_set = nullptr;
  decltype(&::archive_entry_symlink) entry_symlink = nullptr;
};

// The library's entry points, loaded once (thread-safe); the error says which library or
// symbol could not be loaded.
Expected<const LibArchiveApi*> libarchive_api();

}  // namespace depscan
