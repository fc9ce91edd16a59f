// The fatbin reader against what nvcc was asked to compile (fixtures/fatbin/build.sh), and
// against the independent reference reader on the fixtures and on NVIDIA's own libraries.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "fatbin_support.h"
#include "toolchains.h"

using namespace depscan;
using namespace depscan::test;

namespace {

struct Compiled {
  std::string file;
  std::set<std::string> sass, ptx, ptx_isa;
  std::set<std::string> compressions;
  size_t containers, entries;
  bool scanned = false;
};

// What build.sh asked nvcc for. Containers include nvcc 13's device-link container.
const std::vector<Compiled>& compiled() {
  static const std::vector<Compiled> cases = {
      {"sm75_exe", {"sm_75"}, {}, {}, {"none"}, 2, 2},
      {"libsm80_ptx90.so", {"sm_80", "sm_90"}, {"compute_90"}, {"9.0"}, {"none", "zstd"}, 2, 5},
      {"libsm80_ptx90_nocompress.so", {"sm_80", "sm_90"}, {"compute_90"}, {"9.0"}, {"none"}, 2, 5},
      {"libsm80_ptx90_zstd_all.so", {"sm_80", "sm_90"}, {"compute_90"}, {"9.0"}, {"zstd"}, 2, 5},
      {"libsm80_ptx90_lz4.so", {"sm_80", "sm_90"}, {"compute_90"}, {"9.0"}, {"lz4"}, 2, 5},
      {"libsm90a.so", {"sm_90a"}, {}, {}, {"none"}, 2, 2},
      {"libsm100f_120a.so", {"sm_100f", "sm_120a"}, {"compute_120a"}, {"9.0"}, {"none", "zstd"}, 2, 5},
      {"rdc_sm86_exe", {"sm_86"}, {"compute_86"}, {"9.0"}, {"none", "zstd"}, 2, 3},
      {"libsm80_debug.so", {"sm_80"}, {}, {}, {"zstd"}, 2, 2},
      {"two_modules_exe", {"sm_80", "sm_90"}, {}, {}, {"none"}, 3, 4},
      {"libsm80_ptx90_stripped.so", {"sm_80", "sm_90"}, {"compute_90"}, {"9.0"}, {"none", "zstd"}, 2, 5},
      {"libsm80_ptx90_noshdr.so", {"sm_80", "sm_90"}, {"compute_90"}, {"9.0"}, {"none", "zstd"}, 2, 5, true},
  };
  return cases;
}

std::set<std::string> compressions_of(const CudaCode& code) {
  std::set<std::string> out;
  for (const CudaImage& i : code.images) out.insert(compression_name(i.compression));
  return out;
}

}  // namespace

TEST_CASE("each nvcc fixture lists exactly the targets it was compiled for") {
  if (!present_or_skip(have_nvcc(), "nvcc (/usr/local/cuda/bin/nvcc)")) return;
  for (const Compiled& want : compiled()) {
    CAPTURE(want.file);
    CudaCode code = listing_of(fatbin_fixture(want.file));
    CHECK(code.errors.empty());
    CHECK(as_set(code.sass_targets()) == want.sass);
    CHECK(as_set(code.ptx_targets()) == want.ptx);
    CHECK(as_set(code.ptx_isas()) == want.ptx_isa);
    CHECK(compressions_of(code) == want.compressions);
    CHECK(code.containers.size() == want.containers);
    CHECK(code.images.size() == want.entries);
    CHECK(code.found_by_scan == want.scanned);
  }
}

TEST_CASE("entry details: variants, flags, sections, the device-link container") {
  if (!present_or_skip(have_nvcc(), "nvcc (/usr/local/cuda/bin/nvcc)")) return;
  SUBCASE("a and f variants come from the entry flags") {
    CudaCode code = listing_of(fatbin_fixture("libsm100f_120a.so"));
    for (const CudaImage& i : code.images) {
      CAPTURE(cuda_target_name(i));
      if (i.arch == 100) CHECK(i.variant == 'f');
      if (i.arch == 120) CHECK(i.variant == 'a');
      CHECK(((i.flags & 0x100000) != 0) == (i.variant == 'a'));
      CHECK(((i.flags & 0x200000) != 0) == (i.variant == 'f'));
    }
  }
  SUBCASE("-G marks the images as debug images") {
    CudaCode code = listing_of(fatbin_fixture("libsm80_debug.so"));
    REQUIRE(!code.images.empty());
    for (const CudaImage& i : code.images) CHECK(i.debug);
    for (const CudaImage& i : listing_of(fatbin_fixture("libsm80_ptx90.so")).images) CHECK(!i.debug);
  }
  SUBCASE("-rdc keeps PTX only in __nv_relfatbin") {
    CudaCode code = listing_of(fatbin_fixture("rdc_sm86_exe"));
    CHECK(code.ptx_only_relocatable());
    for (const CudaImage& i : code.images)
      if (i.kind == CudaImageKind::Ptx) CHECK(i.section == "__nv_relfatbin");
    CHECK(std::none_of(code.containers.begin(), code.containers.end(), [](auto& c) { return c.device_link; }));
    CHECK(!listing_of(fatbin_fixture("libsm80_ptx90.so")).ptx_only_relocatable());
  }
  SUBCASE("nvcc's device-link container is recognised, with and without section headers") {
    for (const char* file : {"sm75_exe", "libsm80_ptx90.so", "libsm80_ptx90_zstd_all.so", "libsm80_debug.so",
                             "two_modules_exe", "libsm80_ptx90_stripped.so", "libsm80_ptx90_noshdr.so"}) {
      CAPTURE(file);
      CudaCode code = listing_of(fatbin_fixture(file));
      REQUIRE(!code.containers.empty());
      CHECK(code.containers[0].device_link);
      CHECK(std::count_if(code.containers.begin(), code.containers.end(), [](auto& c) { return c.device_link; }) == 1);
    }
  }
  SUBCASE("PTX ISA and cubin format versions") {
    for (const CudaImage& i : listing_of(fatbin_fixture("libsm80_ptx90.so")).images) {
      if (i.kind == CudaImageKind::Ptx) CHECK((i.version_major == 9 && i.version_minor == 0));
      if (i.kind == CudaImageKind::Sass) CHECK((i.version_major == 1 && i.version_minor == 8));
    }
  }
}

TEST_CASE("a file without device code has an empty listing") {
  CHECK(listing_of("/bin/sh").empty());
  CHECK(listing_of(std::string(kCudaLib) + "/libcudnn.so.9").empty());
}

TEST_CASE("the listing agrees with the reference reader entry by entry on every fixture") {
  if (!present_or_skip(have_nvcc(), "nvcc (/usr/local/cuda/bin/nvcc)")) return;
  for (const Compiled& want : compiled()) {
    std::string path = fatbin_fixture(want.file);
    CAPTURE(path);
    ReferenceListing ref = reference_listing(path);
    REQUIRE(ref.ok);
    CudaCode code = listing_of(path);
    CHECK(as_set(code.sass_targets()) == ref.sass);
    CHECK(as_set(code.ptx_targets()) == ref.ptx);
    CHECK(as_set(code.ptx_isas()) == ref.ptx_isa);
    CHECK(containers_with_entries(code) == ref.containers);
    CHECK(code.images.size() == ref.entries);
    CHECK(entry_keys(code) == ref.entry_keys);
  }
}

TEST_CASE("libcudnn_ops.so.9 and libcublasLt.so.13 list the same code as the reference reader") {
  for (const char* name : {"libcudnn_ops.so.9", "libcublasLt.so.13"}) {
    std::string path = std::string(kCudaLib) + "/" + name;
    if (!std::filesystem::exists(path)) continue;
    CAPTURE(path);
    ReferenceListing ref = reference_listing(path);
    REQUIRE(ref.ok);
    CudaCode code = listing_of(path);
    CHECK(code.errors.empty());
    CHECK(as_set(code.sass_targets()) == ref.sass);
    CHECK(as_set(code.ptx_targets()) == ref.ptx);
    CHECK(as_set(code.ptx_isas()) == ref.ptx_isa);
    CHECK(containers_with_entries(code) == ref.containers);
    CHECK(code.containers.size() == ref.containers);
    CHECK(code.images.size() == ref.entries);
    CHECK(entry_keys(code) == ref.entry_keys);
    // NVIDIA's libraries split kernels per architecture; none of their containers is a dlink one.
    CHECK(std::none_of(code.containers.begin(), code.containers.end(), [](auto& c) { return c.device_link; }));
  }
}

TEST_CASE("every CUDA library here agrees with the reference reader") {
  // The reference scans a whole file that has no fatbin sections; libcupti keeps its driver-API
  // modules in .rodata, which the scan_read_only_data mode finds.
  if (!present_or_skip(std::filesystem::is_directory(kCudaLib), kCudaLib)) return;
  size_t libraries = 0, with_code = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kCudaLib)) {
    std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || entry.is_symlink() || name.find(".so") == std::string::npos) continue;
    CAPTURE(name);
    ReferenceListing ref = reference_listing(entry.path().string());
    REQUIRE(ref.ok);
    CudaCode code = listing_of(entry.path().string(), true);
    CHECK(as_set(code.sass_targets()) == ref.sass);
    CHECK(as_set(code.ptx_targets()) == ref.ptx);
    CHECK(as_set(code.ptx_isas()) == ref.ptx_isa);
    CHECK(containers_with_entries(code) == ref.containers);
    CHECK(code.images.size() == ref.entries);
    ++libraries;
    with_code += !code.images.empty();
  }
  MESSAGE(libraries << " libraries, " << with_code << " with device code");
  CHECK(with_code >= 10);
  CHECK(!listing_of(std::string(kCudaLib) + "/libcupti.so.13", true).empty());
  CHECK(listing_of(std::string(kCudaLib) + "/libcupti.so.13", false).empty());
}

TEST_CASE("reference figures for the real libraries (fatbin.md 7)") {
  std::string ops = std::string(kCudaLib) + "/libcudnn_ops.so.9";
  if (!present_or_skip(std::filesystem::exists(ops), ops)) return;
  CudaCode code = listing_of(ops);
  CHECK(code.containers.size() == 22);
  CHECK(code.images.size() == 154);
  CHECK(code.sass_targets() == std::vector<std::string>{"sm_75", "sm_80", "sm_90a", "sm_100f", "sm_120f", "sm_121"});
  CHECK(code.ptx_targets() == std::vector<std::string>{"compute_121"});
  CHECK(code.ptx_isas() == std::vector<std::string>{"9.1"});
}

TEST_CASE("a raw fatbin (the .nv_fatbin bytes alone) lists the same entries") {
  if (!present_or_skip(have_nvcc(), "nvcc (/usr/local/cuda/bin/nvcc)")) return;
  std::string path = fatbin_fixture("libsm80_ptx90.so");
  CudaCode code = listing_of(path);
  REQUIRE(code.containers.size() == 2);
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ByteView file(bytes.data(), bytes.size());
  uint64_t first = code.containers.front().offset, last = code.containers.back().offset;
  uint64_t end = last + 16 + file.read<uint64_t>(last + 8).value();
  CudaCode raw = read_fatbin(file.sub(first, end - first).value());
  CHECK(raw.found_by_scan);
  CHECK(raw.errors.empty());
  REQUIRE(raw.images.size() == code.images.size());
  for (size_t i = 0; i < raw.images.size(); ++i) {
    CHECK(cuda_target_name(raw.images[i]) == cuda_target_name(code.images[i]));
    CHECK(raw.images[i].flags == code.images[i].flags);
  }
}
