// Helpers for the fatbin tests: fixture paths, the reader's listing, and the independent
// reference reader (../shared/tools/fatbin_walk.py) run on the same file.
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "analyzer/read/fatbin_reader.h"
#include "support.h"

namespace depscan::test {

inline const char* kNvcc = "/usr/local/cuda/bin/nvcc";
inline const char* kCudaLib = "/usr/local/cuda/lib64";

inline bool have_nvcc() { return std::filesystem::exists(kNvcc); }

inline std::string fatbin_fixture(const std::string& name) { return fixtures_dir() + "/fatbin/" + name; }

inline CudaCode listing_of(const std::string& path, bool scan_read_only_data = false) {
  auto fs = make_real_fs();
  auto code = read_cuda_code(*fs, path, scan_read_only_data);
  if (!code || !*code) return {};
  return **code;
}

inline std::string fatbin_walk_script() {
  std::filesystem::path beside = std::filesystem::path(source_dir()) / ".." / "shared" / "tools" / "fatbin_walk.py";
  if (std::filesystem::exists(beside)) return beside.string();
  return "/work/shared/tools/fatbin_walk.py";
}

// One entry as both readers describe it.
using EntryKey = std::tuple<std::string, unsigned, std::string, std::string, std::string>;
// section, container, target, version, compression

struct ReferenceListing {
  bool ok = false;
  std::set<std::string> sass, ptx, ptx_isa;
  size_t containers = 0, entries = 0;
  std::vector<EntryKey> entry_keys;
  std::vector<std::string> errors;
};

inline ReferenceListing reference_listing(const std::string& path) {
  ReferenceListing out;
  auto run = run_command("python3 " + shell_quote(fatbin_walk_script()) + " --json " + shell_quote(path));
  auto doc = nlohmann::json::parse(run.output, nullptr, false);
  if (doc.is_discarded() || !doc.is_array() || doc.empty()) return out;
  const auto& file = doc[0];
  for (const auto& t : file["sass"]) out.sass.insert(t.get<std::string>());
  for (const auto& t : file["ptx"]) out.ptx.insert(t.get<std::string>());
  for (const auto& t : file["ptx_isa"]) out.ptx_isa.insert(t.get<std::string>());
  out.containers = file["containers"].get<size_t>();
  out.entries = file["entries"].size();  // --json replaces the summary count with the list
  for (const auto& e : file["errors"]) out.errors.push_back(e.get<std::string>());
  for (const auto& e : file["entries"])
    out.entry_keys.emplace_back(e["section"].get<std::string>(), e["container"].get<unsigned>(),
                                e["target"].get<std::string>(),
                                std::to_string(e["ver_major"].get<int>()) + "." + std::to_string(e["ver_minor"].get<int>()),
                                e["compression"].get<std::string>());
  out.ok = true;
  return out;
}

inline std::string compression_name(CudaCompression c) {
  switch (c) {
    case CudaCompression::None: return "none";
    case CudaCompression::Lz4: return "lz4";
    case CudaCompression::Zstd: return "zstd";
    case CudaCompression::Other: return "old";
  }
  return "?";
}

inline std::vector<EntryKey> entry_keys(const CudaCode& code) {
  std::vector<EntryKey> keys;
  for (const CudaImage& i : code.images)
    keys.emplace_back(i.section, i.container, cuda_target_name(i),
                      std::to_string(i.version_major) + "." + std::to_string(i.version_minor),
                      compression_name(i.compression));
  return keys;
}

inline std::set<std::string> as_set(const std::vector<std::string>& v) { return {v.begin(), v.end()}; }

inline size_t containers_with_entries(const CudaCode& code) {
  std::set<uint32_t> seen;
  for (const CudaImage& i : code.images) seen.insert(i.container);
  return seen.size();
}

}  // namespace depscan::test
