#include "analyzer/input/libarchive_api.h"

#include <dlfcn.h>

#include <fmt/format.h>

#include "analyzer/util/dl_symbol.h"

namespace depscan {
namespace {

// libarchive 3.x has kept soname 13; the unversioned name only exists with the -dev package.
constexpr const char* kSonames[] = {"libarchive.so.13", "libarchive.so"};

Expected<const LibArchiveApi*> load() {
  void* handle = nullptr;
  std::string errors;
  for (const char* soname : kSonames) {
    if ((handle = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL))) break;
    const char* why = ::dlerror();
    errors += fmt::format("{}{}", errors.empty() ? "" : "; ", why ? why : soname);
  }
  if (!handle) return Error{fmt::format("cannot read archives: libarchive could not be loaded ({})", errors)};
  static LibArchiveApi api;
  std::string missing;
  bind_symbol(handle, "archive_read_new", api.read_new, &missing);
  bind_symbol(handle, "archive_read_free", api.read_free, &missing);
  bind_symbol(handle, "archive_read_support_format_zip", api.support_format_zip, &missing);
  bind_symbol(handle, "archive_read_support_format_tar", api.support_format_tar, &missing);
  bind_symbol(handle, "archive_read_support_format_gnutar", api.support_format_gnutar, &missing);
  bind_symbol(handle, "archive_read_support_filter_all", api.support_filter_all, &missing);
  bind_symbol(handle, "archive_read_open_filename", api.open_filename, &missing);
  bind_symbol(handle, "archive_read_next_header", api.next_header, &missing);
  bind_symbol(handle, "archive_read_data", api.read_data, &missing);
  bind_symbol(handle, "archive_error_string", api.error_string, &missing);
  bind_symbol(handle, "archive_entry_filetype", api.entry_filetype, &missing);
  bind_symbol(handle, "archive_entry_hardlink", api.entry_hardlink, &missing);
  bind_symbol(handle, "archive_entry_is_encrypted", api.entry_is_encrypted, &missing);
  bind_symbol(handle, "archive_entry_pathname", api.entry_pathname, &missing);
  bind_symbol(handle, "archive_entry_pathname_utf8", api.entry_pathname_utf8, &missing);
  bind_symbol(handle, "archive_entry_perm", api.entry_perm, &missing);
  bind_symbol(handle, "archive_entry_size", api.entry_size, &missing);
  bind_symbol(handle, "archive_entry_size_is_set", api.entry_size_is_set, &missing);
  bind_symbol(handle, "archive_entry_symlink", api.entry_symlink, &missing);
  if (!missing.empty()) return Error{fmt::format("cannot read archives: libarchive lacks {}", missing)};
  return &api;
}

}  // namespace

Expected<const LibArchiveApi*> libarchive_api() {
  static const Expected<const LibArchiveApi*> loaded = load();
  return loaded;
}

}  // namespace depscan
