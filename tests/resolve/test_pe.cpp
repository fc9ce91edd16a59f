// Windows PE: the DLL search order (application directory, the root's Windows directories,
// PATH-like directories), names matched ignoring case, each edge saying where it was found.
#include <doctest/doctest.h>

#include <filesystem>

#include "resolve_support.h"

namespace depscan::test {

TEST_CASE("PE imports follow the DLL search order inside a root") {
  namespace fs = std::filesystem;
  TempDir tmp("pe");
  fs::path root = tmp.path();
  fs::create_directories(root / "app");
  fs::create_directories(root / "Windows/System32");
  fs::create_directories(root / "extra");
  fs::copy_file(resolve_fixture("pe/app.exe"), root / "app/app.exe");
  fs::copy_file(resolve_fixture("pe/libpe1.dll"), root / "app/libpe1.dll");
  fs::copy_file(resolve_fixture("pe/libpe1.dll"), root / "Windows/System32/kernel32.dll");  // any x86-64 DLL
  fs::copy_file(resolve_fixture("pe/libpe1.dll"), root / "extra/MSVCRT.DLL");
  LoaderEnvironment env = clean_environment();
  Walk without_path("/app/app.exe", env, root.string());
  CHECK(without_path.where("libpe1.dll") == "/app/libpe1.dll");
  CHECK(without_path.edge("libpe1.dll")->how == How::SearchOrder);
  CHECK(without_path.edge("libpe1.dll")->how_detail == "application directory");
  CHECK(without_path.where("KERNEL32.dll") == "/Windows/System32/kernel32.dll");
  CHECK(without_path.edge("KERNEL32.dll")->how_detail == "system directory");
  CHECK(without_path.where("msvcrt.dll") == "not found");
  env.pe_search_path = {"/extra"};
  Walk with_path("/app/app.exe", env, root.string());
  CHECK(with_path.where("msvcrt.dll") == "/extra/MSVCRT.DLL");
  // libpe1.dll imports KERNEL32.dll again: already loaded, matched ignoring case.
  int reused = 0;
  for (const Edge& e : with_path.graph().edges)
    if (e.name == "KERNEL32.dll" && e.how == How::AlreadyLoaded) ++reused;
  CHECK(reused >= 1);
}

TEST_CASE("a 32-bit PE application skips a 64-bit DLL of the same name and takes the 32-bit one") {
  namespace fs = std::filesystem;
  const std::string mingw = fixtures_dir() + "/pe";
  TempDir tmp("pe32");
  fs::path root = tmp.path();
  fs::create_directories(root / "app");
  fs::create_directories(root / "extra");
  fs::copy_file(mingw + "/pe32/app.exe", root / "app/app.exe");
  fs::copy_file(mingw + "/pe64/mydll.dll", root / "app/mydll.dll");
  fs::copy_file(mingw + "/pe32/mydll.dll", root / "extra/mydll.dll");
  LoaderEnvironment env = clean_environment();
  env.pe_search_path = {"/extra"};
  Walk walk("/app/app.exe", env, root.string());
  REQUIRE(walk.graph().objects.front().binary);
  CHECK(walk.graph().objects.front().binary->machine == 0x14c);
  CHECK(walk.where("mydll.dll") == "/extra/mydll.dll");
  const Edge* edge = walk.edge("mydll.dll");
  REQUIRE(edge);
  CHECK(edge->how_detail == "PATH");
  REQUIRE(edge->tried.size() >= 2);
  CHECK(edge->tried.front().path == "/app/mydll.dll");
  CHECK(edge->tried.front().outcome == "skipped: other machine");
  CHECK(edge->tried.back().path == "/extra/mydll.dll");
  CHECK(edge->tried.back().outcome == "taken");
}

TEST_CASE("Windows system DLLs are system-provided only while the tree has no Windows directory") {
  namespace fs = std::filesystem;
  TempDir tmp("pe-system");
  fs::path root = tmp.path();
  fs::create_directories(root / "app");
  fs::copy_file(resolve_fixture("pe/app.exe"), root / "app/app.exe");
  fs::copy_file(resolve_fixture("pe/libpe1.dll"), root / "app/libpe1.dll");
  const std::vector<std::string> system = {"kernel32.dll"}, driver = {"msvcrt.dll"};  // driver: a stand-in
  Walk bare("/app/app.exe", clean_environment(), root.string(), system, driver);
  REQUIRE(bare.edge("KERNEL32.dll"));
  CHECK(bare.edge("KERNEL32.dll")->system_provided);
  CHECK(bare.edge("KERNEL32.dll")->how_detail == "Windows system DLL, not in the scan");
  REQUIRE(bare.edge("msvcrt.dll"));
  CHECK(bare.edge("msvcrt.dll")->system_provided);
  CHECK(bare.edge("msvcrt.dll")->how_detail == "NVIDIA driver DLL, not in the scan");
  Walk unlisted("/app/app.exe", clean_environment(), root.string(), system);
  REQUIRE(unlisted.edge("msvcrt.dll"));
  CHECK_FALSE(unlisted.edge("msvcrt.dll")->system_provided);  // in neither list
  fs::create_directories(root / "Windows/System32");
  Walk with_windows("/app/app.exe", clean_environment(), root.string(), system, driver);
  REQUIRE(with_windows.edge("KERNEL32.dll"));
  CHECK_FALSE(with_windows.edge("KERNEL32.dll")->system_provided);  // a Windows tree without it: really missing
  CHECK(with_windows.where("KERNEL32.dll") == "not found");
  REQUIRE(with_windows.edge("msvcrt.dll"));
  CHECK_FALSE(with_windows.edge("msvcrt.dll")->system_provided);
}

}  // namespace depscan::test
