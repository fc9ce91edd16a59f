#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <doctest/doctest.h>

#include "analyzer/input/file_source.h"
#include "analyzer/input/fs.h"
#include "analyzer/input/sniff.h"
#include "analyzer/util/bytes.h"
#include "analyzer/util/strings.h"
#include "support.h"

using namespace depscan;
namespace fs = std::filesystem;

TEST_CASE("normalize_path drops '.', empty components and what '..' cancels, never climbing above /") {
  CHECK(normalize_path("/usr/lib/../lib64/./libc.so.6") == "/usr/lib64/libc.so.6");
  CHECK(normalize_path("//usr///local/") == "/usr/local");
  CHECK(normalize_path("/../../etc/ld.so.cache") == "/etc/ld.so.cache");
  CHECK(normalize_path("/a/b/../..") == "/");
  CHECK(normalize_path("") == "/");
  CHECK(normalize_path(".") == "/");
  CHECK(normalize_path("relative/dir/..") == "/relative");
  CHECK(normalize_path("/opt/..x/.y/...") == "/opt/..x/.y/...");
  CHECK(absolute_path("/x/./y") == "/x/y");
}

TEST_CASE("rooted file system keeps .. and absolute symlinks inside the root") {
  test::TempDir tmp("rootedfs");
  fs::create_directories(tmp.path() / "usr/lib");
  std::ofstream(tmp.path() / "usr/lib/libx.so") << "x";
  fs::create_symlink("/usr/lib", tmp.path() / "lib");                 // absolute, re-rooted
  fs::create_symlink("../../../../../etc", tmp.path() / "usr/escape"); // clamped at the root
  auto rooted = make_rooted_fs(tmp.str());
  CHECK(rooted->canonical("/lib/libx.so").value() == "/usr/lib/libx.so");
  CHECK(rooted->host_path("/lib/libx.so").value() == tmp.str() + "/usr/lib/libx.so");
  CHECK(rooted->canonical("/usr/../../../usr/lib").value() == "/usr/lib");
  auto escaped = rooted->canonical("/usr/escape");
  // "/etc" inside the root does not exist; the host's /etc must never be reached.
  CHECK_FALSE(escaped.ok());
  CHECK(rooted->is_regular("/lib/libx.so"));
}

TEST_CASE("symlink loops end with an error, not a hang") {
  test::TempDir tmp("loop");
  fs::create_symlink("b", tmp.path() / "a");
  fs::create_symlink("a", tmp.path() / "b");
  auto rooted = make_rooted_fs(tmp.str());
  auto r = rooted->canonical("/a");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().find("symbolic links") != std::string::npos);
  auto real = make_real_fs();
  CHECK_FALSE(real->stat(tmp.str() + "/a").ok());
}

TEST_CASE("sniff refuses a FIFO without opening it and classifies magic bytes") {
  test::TempDir tmp("sniff");
  std::string fifo = tmp.str() + "/pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto real = make_real_fs();
  auto r = sniff(*real, fifo);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().find("FIFO") != std::string::npos);
  const uint8_t elf[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0};
  CHECK(sniff_bytes(ByteView(elf, sizeof elf)) == FileFormat::Elf);
  const uint8_t zip[] = {'P', 'K', 3, 4};
  CHECK(sniff_bytes(ByteView(zip, sizeof zip)) == FileFormat::Zip);
  CHECK(sniff_bytes(ByteView(elf, 2)) == FileFormat::Unknown);
  const uint8_t gzip[] = {0x1f, 0x8b, 8, 0}, xz[] = {0xfd, '7', 'z', 'X', 'Z', 0}, zstd[] = {0x28, 0xb5, 0x2f, 0xfd},
                bzip2[] = {'B', 'Z', 'h', '9'}, xz_short[] = {0xfd, '7', 'z', 'X', 'Z', 1};
  for (ByteView compressed : {ByteView(gzip, 4), ByteView(xz, 6), ByteView(zstd, 4), ByteView(bzip2, 4)})
    CHECK(sniff_bytes(compressed) == FileFormat::Compressed);
  CHECK(sniff_bytes(ByteView(xz_short, 6)) == FileFormat::Unknown);
}

TEST_CASE("sniff_and_keep_open hands back the regular file it read, the same one stat saw") {
  test::TempDir tmp("sniffopen");
  auto real = make_real_fs();
  std::string self = fs::read_symlink("/proc/self/exe").string();  // an ELF file
  auto elf = sniff_and_keep_open(*real, self);
  REQUIRE(elf.ok());
  CHECK(elf->sniffed.format == FileFormat::Elf);
  REQUIRE(elf->file != nullptr);
  CHECK(elf->file->info().inode == elf->sniffed.info.inode);
  CHECK(elf->file->info().device == elf->sniffed.info.device);
  auto head = elf->file->read(0, 4);
  REQUIRE(head.has_value());
  CHECK(sniff_bytes(*head) == FileFormat::Elf);
  auto dir = sniff_and_keep_open(*real, tmp.str());
  REQUIRE(dir.ok());
  CHECK(dir->sniffed.format == FileFormat::Directory);
  CHECK(dir->file == nullptr);
  std::string fifo = tmp.str() + "/pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto pipe = sniff_and_keep_open(*real, fifo);
  REQUIRE_FALSE(pipe.ok());
  CHECK(pipe.error().find("FIFO") != std::string::npos);
}

TEST_CASE("the cached file system hands the file of a header read to the next open of that path") {
  test::TempDir tmp("kept");
  std::string path = tmp.str() + "/libkept.so", other = tmp.str() + "/libother.so";
  std::ofstream(path) << "\x7f" "ELF and the rest of the file";
  std::ofstream(other) << "another file";
  auto cached = make_cached_fs(make_real_fs());
  auto head = cached->read_head(path, 4);
  REQUIRE(head.ok());
  CHECK(*head == "\x7f" "ELF");
  REQUIRE(fs::remove(path));  // from here on only the kept descriptor can open it
  CHECK(cached->open(other).ok());  // another path does not take it
  auto kept = cached->open(path);
  REQUIRE(kept.ok());
  auto bytes = (*kept)->read(4, 4);
  REQUIRE(bytes.has_value());
  CHECK(std::string(reinterpret_cast<const char*>(bytes->data()), bytes->size()) == " and");
  CHECK_FALSE(cached->open(path).ok());  // handed over once
  CHECK(cached->read_head(path, 4).value() == "\x7f" "ELF");  // the header is remembered
}

TEST_CASE("ByteView never reads past the end") {
  const uint8_t data[] = {1, 2, 3, 4, 'a', 'b', 0, 'c'};
  ByteView v(data, sizeof data);
  CHECK(v.read<uint32_t>(0).value() == 0x04030201u);
  CHECK_FALSE(v.read<uint32_t>(5).has_value());
  CHECK_FALSE(v.read<uint8_t>(UINT64_MAX).has_value());
  CHECK_FALSE(v.sub(4, UINT64_MAX).has_value());
  CHECK(v.cstring(4).value() == "ab");
  CHECK_FALSE(v.cstring(7).has_value());  // no terminator before the end
  CHECK(v.read<uint32_t>(0, false).value() == 0x01020304u);
}

TEST_CASE("the cached file system answers as the one it wraps and keeps its answers") {
  test::TempDir tmp("cachedfs");
  fs::create_directories(tmp.path() / "usr/lib");
  std::ofstream(tmp.path() / "usr/lib/libx.so.1") << "\x7f" "ELF and more than sixty-four bytes of text after the magic, to be cut";
  fs::create_symlink("libx.so.1", tmp.path() / "usr/lib/libx.so");
  auto counted = make_rooted_fs(tmp.str());
  FileSystem* inner = counted.get();
  auto cached = make_cached_fs(std::move(counted));
  for (int round = 0; round < 2; ++round) {  // the second round is answered from the cache
    CHECK(cached->canonical("/usr/lib/libx.so").value() == "/usr/lib/libx.so.1");
    CHECK(cached->stat("/usr/lib/libx.so").value().kind == FileKind::Regular);
    CHECK_FALSE(cached->stat("/usr/lib/missing.so").ok());
    CHECK(cached->read_text("/usr/lib/libx.so", 8).value() == std::string("\x7f" "ELF and"));
    CHECK(cached->read_text("/usr/lib/libx.so", 4).value() == "\x7f" "ELF");  // the length is part of the key
    CHECK(cached->list("/usr/lib").size() == 2);
    CHECK(cached->root() == inner->root());
  }
  // The cache holds answers, not files: what changes underneath is not seen (a scan's contract).
  fs::remove(tmp.path() / "usr/lib/libx.so.1");
  CHECK(cached->stat("/usr/lib/libx.so").ok());
  CHECK_FALSE(inner->stat("/usr/lib/libx.so").ok());
}

TEST_CASE("the cached canonical path agrees with realpath(3) and the rooted walk on every kind of link") {
  test::TempDir tmp("cachedcanon");
  fs::create_directories(tmp.path() / "opt/cuda-13.0/lib");
  fs::create_directories(tmp.path() / "usr/lib");
  std::ofstream(tmp.path() / "opt/cuda-13.0/lib/libcudart.so.13.0.48") << "x";
  fs::create_symlink("cuda-13.0", tmp.path() / "opt/cuda");                       // directory link
  fs::create_symlink("lib", tmp.path() / "opt/cuda-13.0/lib64");
  fs::create_symlink("libcudart.so.13.0.48", tmp.path() / "opt/cuda-13.0/lib/libcudart.so.13");
  fs::create_symlink("libcudart.so.13", tmp.path() / "opt/cuda-13.0/lib/libcudart.so");  // a chain
  fs::create_symlink("../../opt/cuda/lib64/libcudart.so", tmp.path() / "usr/lib/up.so");  // ".." in the target
  fs::create_symlink("/opt/cuda/lib64/libcudart.so.13", tmp.path() / "usr/lib/abs.so");  // absolute target
  fs::create_symlink("sub/x.so", tmp.path() / "usr/lib/dangling.so");
  fs::create_symlink("loop-b", tmp.path() / "usr/lib/loop-a");
  fs::create_symlink("loop-a", tmp.path() / "usr/lib/loop-b");
  const char* paths[] = {"/opt/cuda/lib64/libcudart.so",  "/opt/cuda/lib64/libcudart.so.13", "/opt/cuda/lib64",
                         "/usr/lib/up.so",                "/usr/lib/abs.so",                 "/usr/lib/dangling.so",
                         "/usr/lib/loop-a",               "/opt/cuda/lib64/../lib/libcudart.so", "/opt//cuda/lib64/",
                         "/opt/cuda/lib64/libcudart.so/x", "/usr/lib/missing.so",            "/"};
  auto rooted_cached = make_cached_fs(make_rooted_fs(tmp.str()));
  auto rooted = make_rooted_fs(tmp.str());
  auto real_cached = make_cached_fs(make_real_fs());
  for (int round = 0; round < 2; ++round) {
    for (const char* path : paths) {
      INFO(path);
      auto expected = rooted->canonical(path);
      auto got = rooted_cached->canonical(path);
      REQUIRE(got.ok() == expected.ok());
      if (expected.ok()) CHECK(*got == *expected);
      if (std::string(path) == "/usr/lib/abs.so") continue;  // absolute: the host's /opt, not the tree's
      std::string host = tmp.str() + path;
      char buf[PATH_MAX];
      const char* real = ::realpath(host.c_str(), buf);
      auto real_got = real_cached->canonical(host);
      REQUIRE(real_got.ok() == (real != nullptr));
      if (real) CHECK(*real_got == std::string(real));
    }
  }
  CHECK(rooted_cached->canonical("/usr/lib/abs.so").value() == "/opt/cuda-13.0/lib/libcudart.so.13.0.48");
}

TEST_CASE("read_text reads files whose size stat does not tell (/proc) and stops at max_bytes") {
  auto real = make_real_fs();
  auto status = real->read_text("/proc/self/status");
  REQUIRE(status.ok());
  CHECK(status->find("Name:") == 0);  // st_size is 0 for /proc files
  test::TempDir tmp("readtext");
  std::ofstream(tmp.path() / "f") << std::string(10000, 'x');
  CHECK(real->read_text(tmp.str() + "/f").value().size() == 10000);
  CHECK(real->read_text(tmp.str() + "/f", 4097).value().size() == 4097);
}

TEST_CASE("valid_utf8 keeps well-formed UTF-8 and replaces every other byte with U+FFFD") {
  const std::string fffd = "\xef\xbf\xbd";
  CHECK(valid_utf8("libcudnn.so.9") == "libcudnn.so.9");
  CHECK(valid_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80") == "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  CHECK(valid_utf8("a\xff" "b") == "a" + fffd + "b");
  CHECK(valid_utf8("\xc3") == fffd);                      // truncated sequence
  CHECK(valid_utf8("\xc0\xaf") == fffd + fffd);           // overlong '/'
  CHECK(valid_utf8("\xed\xa0\x80") == fffd + fffd + fffd);  // a UTF-16 surrogate
  CHECK(valid_utf8("\xf4\x90\x80\x80") == fffd + fffd + fffd + fffd);  // past U+10FFFF
}
