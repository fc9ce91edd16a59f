// Differential test over this machine's real ELF files: for every shared object and executable
// under /usr/lib/x86_64-linux-gnu, /usr/local/cuda/lib64 and /usr/bin, depscan's resolved file
// for every NEEDED must be the loader's. Truth: `ld.so --list FILE` for libraries (installed by
// the distribution or NVIDIA's packages, so trusted), the program itself run with
// LD_TRACE_LOADED_OBJECTS=1 for executables (only dynamically linked ones whose interpreter is
// the system loader, so the loader stops after listing and no program code runs; never setuid).
// Everything runs with a clean environment. Prints each disagreement and the agreement rate.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "ldso/loader_truth.h"
#include "support.h"

namespace depscan::test {
namespace {
namespace fs = std::filesystem;

constexpr const char* kInterpreter = "/lib64/ld-linux-x86-64.so.2";

struct Candidate {
  std::string path;      // canonical
  bool executable;       // truth from running it with LD_TRACE_LOADED_OBJECTS=1
};

// x86-64 ELF with a dynamic section; interp receives PT_INTERP (empty if none).
bool is_dynamic_x86_64_elf(const std::string& path, std::string& interp) {
  std::ifstream in(path, std::ios::binary);
  unsigned char eh[64] = {};
  if (!in.read(reinterpret_cast<char*>(eh), sizeof eh)) return false;
  if (std::memcmp(eh, "\177ELF", 4) != 0 || eh[4] != 2 || eh[5] != 1) return false;
  auto u16 = [&](int o) { return uint16_t(eh[o] | eh[o + 1] << 8); };
  auto u64 = [](const unsigned char* p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = v << 8 | p[i];
    return v;
  };
  uint16_t type = u16(16), machine = u16(18), phentsize = u16(54), phnum = u16(56);
  if ((type != 2 && type != 3) || machine != 62 || phentsize != 56) return false;
  uint64_t phoff = u64(eh + 32);
  bool dynamic = false;
  for (uint16_t i = 0; i < phnum; ++i) {
    unsigned char ph[56];
    in.seekg(static_cast<std::streamoff>(phoff + uint64_t{i} * 56));
    if (!in.read(reinterpret_cast<char*>(ph), sizeof ph)) return false;
    uint32_t p_type = ph[0] | ph[1] << 8 | ph[2] << 16 | uint32_t(ph[3]) << 24;
    if (p_type == 2) dynamic = true;
    if (p_type == 3) {
      uint64_t offset = u64(ph + 8), size = u64(ph + 32);
      if (size == 0 || size > 4096) return false;
      std::string text(size, '\0');
      in.seekg(static_cast<std::streamoff>(offset));
      if (!in.read(text.data(), static_cast<std::streamsize>(size))) return false;
      interp = text.c_str();
    }
  }
  return dynamic;
}

std::vector<Candidate> collect_candidates() {
  std::vector<Candidate> out;
  std::set<std::string> seen;
  const std::pair<const char*, bool> dirs[] = {
      {"/usr/lib/x86_64-linux-gnu", false}, {"/usr/local/cuda/lib64", false}, {"/usr/bin", true}};
  for (const auto& [dir, executables] : dirs) {
    std::error_code ec;
    fs::path base = fs::canonical(dir, ec);
    if (ec) continue;
    for (auto it = fs::recursive_directory_iterator(base, fs::directory_options::skip_permission_denied, ec);
         it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) break;
      if (!it->is_regular_file(ec) || it->is_symlink(ec)) continue;
      std::string path = it->path().string();
      std::string interp;
      if (!is_dynamic_x86_64_elf(path, interp) || !seen.insert(path).second) continue;
      if (executables) {
        struct stat st;
        if (interp != kInterpreter || ::stat(path.c_str(), &st) != 0 || (st.st_mode & (S_ISUID | S_ISGID)))
          continue;
      }
      out.push_back({path, executables});
    }
  }
  return out;
}

std::string loader_listing(const Candidate& c) {
  std::string command = c.executable
      ? "cd / && timeout 20 env -i LD_TRACE_LOADED_OBJECTS=1 " + shell_quote(c.path) + " </dev/null 2>&1"
      : "cd / && timeout 20 env -i " + std::string(kInterpreter) + " --list " + shell_quote(c.path) + " 2>&1";
  return run_command(command).output;
}

// Runs `work(i)` for i in [0, count) on `threads` threads.
template <typename Work>
void parallel_for(size_t count, unsigned threads, Work work) {
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (size_t i = next++; i < count; i = next++) work(i);
    });
  for (auto& th : pool) th.join();
}

}  // namespace

TEST_CASE("differential: depscan resolves the machine's real ELF files as the loader does") {
  auto start = std::chrono::steady_clock::now();
  std::vector<Candidate> files = collect_candidates();
  REQUIRE_MESSAGE(files.size() > 100, "too few ELF files found to compare: " << files.size());
  RunPlace host{"/", "", {}};

  std::vector<LoaderTrace> truth(files.size());
  parallel_for(files.size(), 2, [&](size_t i) { truth[i] = parse_trace(loader_listing(files[i]), host); });

  // depscan in chunks (one process per chunk, many roots each), on the same two threads.
  constexpr size_t kChunk = 250;
  size_t chunks = (files.size() + kChunk - 1) / kChunk;
  std::vector<DepscanRun> runs(chunks);
  std::string bin = fs::absolute(depscan_bin()).string();
  parallel_for(chunks, 2, [&](size_t k) {
    std::string command = "cd / && env -i PATH=/usr/bin:/bin " + shell_quote(bin) + " --format json";
    for (size_t i = k * kChunk; i < std::min(files.size(), (k + 1) * kChunk); ++i)
      command += " " + shell_quote(files[i].path);
    CommandResult r = run_command(command + " 2>/dev/null");
    runs[k] = parse_depscan(r.exit_code, r.output, host);
  });

  size_t compared = 0, agreed = 0, no_listing = 0, edges = 0;
  std::vector<std::string> report;
  for (size_t k = 0; k < chunks; ++k) {
    REQUIRE_MESSAGE(runs[k].error.empty(), "depscan chunk " << k << ": " << runs[k].error);
    std::map<std::string, size_t> root_of;
    for (size_t r = 0; r < runs[k].root_paths.size(); ++r)
      root_of[canonical_in(host, runs[k].root_paths[r])] = r;
    for (size_t i = k * kChunk; i < std::min(files.size(), (k + 1) * kChunk); ++i) {
      if (!truth[i].parsed) {
        ++no_listing;  // the loader refused it (e.g. not loadable on its own): nothing to compare
        std::cout << "NO LISTING " << files[i].path << "\n";
        continue;
      }
      ++compared;
      auto root = root_of.find(files[i].path);
      if (root == root_of.end()) {
        report.push_back(files[i].path + ": depscan did not analyse it as a root");
        continue;
      }
      edges += runs[k].edges_by_root[root->second].size();
      auto diffs = compare_with_loader(truth[i], runs[k].edges_by_root[root->second], files[i].path);
      if (diffs.empty()) {
        ++agreed;
        continue;
      }
      std::string entry = files[i].path + ":";
      for (const std::string& d : diffs) entry += "\n    " + d;
      report.push_back(entry);
    }
  }

  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double rate = compared ? 100.0 * double(agreed) / double(compared) : 0.0;
  for (const std::string& line : report) std::cout << "DISAGREE " << line << "\n";
  size_t executables = std::count_if(files.begin(), files.end(), [](const Candidate& c) { return c.executable; });
  std::cout << "differential: " << agreed << "/" << compared << " files agree (" << rate << "%), "
            << edges << " NEEDED/preload edges compared, " << no_listing << " without a loader listing, "
            << files.size() << " candidates ("
            << files.size() - executables << " libraries, " << executables << " executables), "
            << seconds << " s\n";
  CHECK(compared > 100);
  CHECK(edges > compared);
  CHECK_MESSAGE(rate >= 99.5, "agreement " << rate << "% is below 99.5%");
}

}  // namespace depscan::test
