// Unit tests of the wheel and archive helpers: member-name safety, wheel names, install schemes,
// METADATA parsing, version specifiers and the manylinux policy data.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "analyzer/check/wheel_policy.h"
#include "analyzer/input/archive.h"
#include "analyzer/input/image.h"
#include "analyzer/input/python_env.h"
#include "analyzer/input/safe_tree.h"
#include "analyzer/input/wheel.h"
#include "matrix/policy.h"
#include "support.h"

using namespace depscan;

TEST_CASE("archive member names: normalised, and refused when they escape") {
  CHECK(*safe_relative_name("torch/lib/./libc10.so") == "torch/lib/libc10.so");
  CHECK(*safe_relative_name("a//b\\c") == "a/b/c");
  CHECK_FALSE(safe_relative_name("/etc/passwd"));
  CHECK_FALSE(safe_relative_name("../../evil.so"));
  CHECK_FALSE(safe_relative_name("pkg/../../evil.so"));
  CHECK_FALSE(safe_relative_name("C:/windows/evil.dll"));
  CHECK_FALSE(safe_relative_name(""));
  CHECK_FALSE(safe_relative_name("./"));
  // nesting and length: no installer or runtime writes these, and a walk of them would be quadratic
  std::string nested;
  for (int i = 0; i < 100; ++i) nested += "d/";
  CHECK(safe_relative_name(nested + "lib.so"));  // 100 directories deep
  auto deeper = safe_relative_name(nested + "d/lib.so");
  REQUIRE_FALSE(deeper);
  CHECK(deeper.error().find("nests more than 100 directories deep") != std::string::npos);
  CHECK(deeper.error().size() < 250);  // the name is shortened
  auto longest = safe_relative_name(std::string(4096, 'x'));
  REQUIRE_FALSE(longest);
  CHECK(longest.error().find("is 4096 bytes long, longer than any path Linux opens (4095)") != std::string::npos);
  CHECK(safe_relative_name(std::string(4095, 'x')));
  CHECK(link_stays_inside("usr/lib/libfoo.so", "libfoo.so.1"));
  CHECK(link_stays_inside("usr/lib/libfoo.so", "../lib64/libfoo.so.1"));
  CHECK_FALSE(link_stays_inside("usr/lib/libfoo.so", "../../../etc/passwd"));
  CHECK_FALSE(link_stays_inside("pkg/passwd", "/etc/passwd"));
}

TEST_CASE("wheel file names and the install schemes of .data directories") {
  auto name = parse_wheel_file_name("torch-2.3.0-1-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl");
  REQUIRE(name);
  CHECK(name->distribution == "torch");
  CHECK(name->build == "1");
  CHECK(name->platform == "manylinux_2_17_x86_64.manylinux2014_x86_64");
  CHECK_FALSE(parse_wheel_file_name("torch-2.3.0.tar.gz"));
  CHECK(*python_dir_for_tag("cp312") == "python3.12");
  CHECK_FALSE(python_dir_for_tag("py3"));

  InstallLayout layout{"lib/python3.12/site-packages", "python3.12"};
  CHECK(*install_location("torch/lib/libtorch.so", "", "torch", layout) == "lib/python3.12/site-packages/torch/lib/libtorch.so");
  CHECK(*install_location("x-1.data/platlib/x/_x.so", "x-1.data", "x", layout) == "lib/python3.12/site-packages/x/_x.so");
  CHECK(*install_location("x-1.data/scripts/xtool", "x-1.data", "x", layout) == "bin/xtool");
  CHECK(*install_location("x-1.data/data/share/x.so", "x-1.data", "x", layout) == "share/x.so");
  CHECK(*install_location("x-1.data/headers/x.h", "x-1.data", "x", layout) == "include/site/python3.12/x/x.h");
  CHECK_FALSE(install_location("x-1.data/unknown/y", "x-1.data", "x", layout));
}

TEST_CASE("METADATA, WHEEL and RECORD") {
  Metadata meta = parse_metadata(
      "Metadata-Version: 2.1\nName: torch\nVersion: 2.3.0\n"
      "Requires-Dist: nvidia-cudnn-cu12 (==9.1.0.70) ; platform_system == \"Linux\"\n"
      "Requires-Dist: Typing_Extensions[dev]>=4.8.0\n\nRequires-Dist: not-a-header\n");
  CHECK(meta.name == "torch");
  CHECK(meta.version == "2.3.0");
  REQUIRE(meta.requires_dist.size() == 2);
  CHECK(meta.requires_dist[0].name == "nvidia-cudnn-cu12");
  CHECK(meta.requires_dist[0].specifier == "==9.1.0.70");
  CHECK(meta.requires_dist[0].marker == "platform_system == \"Linux\"");
  CHECK(meta.requires_dist[1].name == "typing-extensions");
  CHECK(meta.requires_dist[1].specifier == ">=4.8.0");
  CHECK(parse_wheel_tags("Wheel-Version: 1.0\nTag: cp312-cp312-manylinux_2_17_x86_64\nTag: py3-none-any\n") ==
        std::vector<std::string>{"cp312-cp312-manylinux_2_17_x86_64", "py3-none-any"});
  CHECK(parse_record_paths("a/b.so,sha256=x,1\n\"we,ird\"\"s.so\",,\nc.dist-info/RECORD,,\n") ==
        std::vector<std::string>{"a/b.so", "we,ird\"s.so", "c.dist-info/RECORD"});
  CHECK(normalize_dist_name("Nvidia_CuDNN.cu12") == "nvidia-cudnn-cu12");
  // as pip rewrites RECORD on install: .data/<scheme>/ paths become where the files went
  InstallLayout layout{"lib/python3.11/site-packages", "python3.11"};
  CHECK(installed_record("d-1.0.data/platlib/d/lib.so,sha256=x,9\nd-1.0.data/scripts/tool,sha256=y,3\n"
                         "\"d-1.0.data/purelib/we,ird.py\",,\nd-1.0.data/headers/d.h,,\nd/plain.py,,\n",
                         "d", layout) ==
        "d/lib.so,sha256=x,9\n../../../bin/tool,sha256=y,3\n\"we,ird.py\",,\n"
        "../../../include/site/python3.11/d/d.h,,\nd/plain.py,,\n");
}

TEST_CASE("a site-packages directory's environment: the prefix one interpreter's sys.path covers") {
  CHECK(python_environment_of("/opt/venv/lib/python3.12/site-packages") == "/opt/venv");
  CHECK(python_environment_of("/opt/venv/lib64/python3.12/site-packages/") == "/opt/venv");
  CHECK(python_environment_of("/usr/lib/python3/dist-packages") == "/usr");
  CHECK(python_environment_of("/usr/local/lib/python3.11/dist-packages") == "/usr");  // Debian's python3 reads both
  CHECK(python_environment_of("C:/Python312/Lib/site-packages") == "C:/Python312");
  CHECK(python_environment_of("venv/lib/python3.11/site-packages") == "venv");
  CHECK(python_environment_of("/data/site-packages") == "/data/site-packages");  // no prefix: the directory alone
  CHECK(python_environment_of("/opt/venv/lib/py/site-packages") == "/opt/venv/lib/py/site-packages");
  CHECK(python_environment_of("/opt/venv/share/python3.12/site-packages") == "/opt/venv/share/python3.12/site-packages");
  CHECK(python_environment_of("site-packages") == "site-packages");
}

TEST_CASE("one environment's site-packages in sys.path's order (site.getsitepackages)") {
  std::vector<std::string_view> debian{"/usr/lib/python3.11/dist-packages", "/usr/lib/python3/dist-packages",
                                       "/usr/local/lib/python3.11/dist-packages"};
  sort_as_sys_path(debian);
  CHECK(debian == std::vector<std::string_view>{"/usr/local/lib/python3.11/dist-packages", "/usr/lib/python3/dist-packages",
                                                "/usr/lib/python3.11/dist-packages"});
  std::vector<std::string_view> fedora{"/usr/lib/python3.12/site-packages", "/usr/local/lib/python3.12/site-packages",
                                       "/usr/lib64/python3.12/site-packages", "/usr/local/lib64/python3.12/site-packages"};
  sort_as_sys_path(fedora);
  CHECK(fedora == std::vector<std::string_view>{"/usr/local/lib64/python3.12/site-packages", "/usr/local/lib/python3.12/site-packages",
                                                "/usr/lib64/python3.12/site-packages", "/usr/lib/python3.12/site-packages"});
  std::vector<std::string_view> venv{"/v/lib/python3.11/site-packages", "/v/lib64/python3.11/site-packages"};
  sort_as_sys_path(venv);
  CHECK(venv.front() == "/v/lib64/python3.11/site-packages");
}

TEST_CASE("the site-packages of the interpreter under a prefix: /usr's python3 also reads /usr/local's of its own name") {
  auto layout = [](const char* name, std::initializer_list<const char*> dirs) {
    auto tmp = std::make_unique<test::TempDir>(name);
    for (const char* dir : dirs) std::filesystem::create_directories(tmp->path() / dir);
    return tmp;
  };
  auto debian = layout("sysdebian", {"usr/lib/python3/dist-packages", "usr/lib/python3.11/dist-packages",
                                     "usr/local/lib/python3.11/dist-packages", "usr/local/lib/python2.7/dist-packages",
                                     "usr/local/lib/python3.11/site-packages"});
  CHECK(interpreter_site_packages(*make_rooted_fs(debian->str()), "/usr") ==
        std::vector<std::string>{"/usr/local/lib/python3.11/dist-packages", "/usr/lib/python3/dist-packages",
                                 "/usr/lib/python3.11/dist-packages"});
  CHECK(interpreter_site_packages(*make_rooted_fs(debian->str()), "/usr/local") ==
        std::vector<std::string>{"/usr/local/lib/python2.7/dist-packages", "/usr/local/lib/python3.11/site-packages",
                                 "/usr/local/lib/python3.11/dist-packages"});
  auto fedora = layout("sysfedora", {"usr/lib64/python3.12/site-packages", "usr/lib/python3.12/site-packages",
                                     "usr/local/lib/python3.12/site-packages", "usr/local/lib64/python3.12/site-packages"});
  CHECK(interpreter_site_packages(*make_rooted_fs(fedora->str()), "/usr") ==
        std::vector<std::string>{"/usr/local/lib64/python3.12/site-packages", "/usr/local/lib/python3.12/site-packages",
                                 "/usr/lib64/python3.12/site-packages", "/usr/lib/python3.12/site-packages"});
  CHECK(interpreter_site_packages(*make_rooted_fs(fedora->str()), "/usr/local") ==
        std::vector<std::string>{"/usr/local/lib64/python3.12/site-packages", "/usr/local/lib/python3.12/site-packages"});
  auto python_image = layout("syspyimage", {"usr/local/lib/python3.12/site-packages"});
  CHECK(interpreter_site_packages(*make_rooted_fs(python_image->str()), "/usr").empty());

  auto venv = layout("sysvenv", {"venv/lib/python3.11/site-packages", "usr/lib/python3/dist-packages",
                                 "usr/lib/python3.12/dist-packages", "usr/local/lib/python3.11/dist-packages"});
  auto venv_dirs = [&](const std::string& cfg) {
    std::ofstream(venv->path() / "venv/pyvenv.cfg") << cfg;
    return interpreter_site_packages(*make_rooted_fs(venv->str()), "/venv");
  };
  std::vector<std::string> alone{"/venv/lib/python3.11/site-packages"};
  std::vector<std::string> with_system{"/venv/lib/python3.11/site-packages", "/usr/local/lib/python3.11/dist-packages",
                                       "/usr/lib/python3/dist-packages"};  // not python3.12's
  CHECK(venv_dirs("home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.2\n") == alone);
  CHECK(venv_dirs("home = /usr/bin\nInclude-System-Site-Packages = True\n") == with_system);  // as site.py reads it
  CHECK(venv_dirs("home=/usr/bin\n") == with_system);  // site.py's default when the key is missing
  CHECK(venv_dirs("home = /venv/bin\n") == alone);     // its own prefix: nothing more
  CHECK(venv_dirs("home = /usr/bin\nhome = /venv/bin\n") == with_system);  // getpath takes the first
  venv_dirs("home = /venv/bin\n");
  std::filesystem::create_directory_symlink("venv", venv->path() / "venvlink");  // the same venv by another path
  CHECK(interpreter_site_packages(*make_rooted_fs(venv->str()), "/venvlink") ==
        std::vector<std::string>{"/venvlink/lib/python3.11/site-packages"});
  CHECK(venv_dirs("home = usr/bin\n") == alone);       // not an absolute path
  std::filesystem::remove(venv->path() / "venv/pyvenv.cfg");
  REQUIRE(::mkfifo((venv->path() / "venv/pyvenv.cfg").c_str(), 0600) == 0);  // read, it would hang
  CHECK(interpreter_site_packages(*make_rooted_fs(venv->str()), "/venv") == alone);

  // an older interpreter's directory left in the venv is not on this one's sys.path
  auto upgraded = layout("sysupgraded", {"venv/lib/python3.10/site-packages", "venv/lib/python3.11/site-packages"});
  auto upgraded_dirs = [&](const std::string& cfg) {
    std::ofstream(upgraded->path() / "venv/pyvenv.cfg") << cfg;
    return interpreter_site_packages(*make_rooted_fs(upgraded->str()), "/venv");
  };
  CHECK(upgraded_dirs("home = /venv/bin\nversion = 3.11.7\n") == alone);
  CHECK(upgraded_dirs("home = /venv/bin\nversion_info = 3.11.7.final.0\n") == alone);  // uv's key
  CHECK(upgraded_dirs("home = /venv/bin\n").size() == 2);  // no version: both kept
  auto free_threaded = layout("sysfreethreaded", {"venv/lib/python3.13t/site-packages"});
  std::ofstream(free_threaded->path() / "venv/pyvenv.cfg") << "home = /venv/bin\nversion = 3.13.1\n";
  CHECK(interpreter_site_packages(*make_rooted_fs(free_threaded->str()), "/venv") ==
        std::vector<std::string>{"/venv/lib/python3.13t/site-packages"});  // 3.13t is 3.13's free-threaded build
}

TEST_CASE("the distribution importlib.metadata finds first: on the module's own sys.path, in its order") {
  auto dist = [](const char* name, const char* version, const char* site) {
    Distribution d;
    d.name = name;
    d.version = version;
    d.site_packages = site;
    return d;
  };
  std::vector<Distribution> installed{dist("nvidia_nccl_cu11", "2.21.5", "/usr/lib/python3/dist-packages"),
                                      dist("nvidia-nccl-cu11", "2.14.3", "/usr/local/lib/python3.11/dist-packages"),
                                      dist("nvidia-nccl-cu11", "2.18.1", "/usr/local/lib/python3.12/dist-packages"),
                                      dist("nvidia-nccl-cu11", "2.19.3", "/opt/venv/lib/python3.11/site-packages")};
  Distribution system_module = dist("cupy-cuda11x", "13.6.0", "/usr/lib/python3.11/dist-packages");
  const Distribution* first = first_on_sys_path(installed, "nvidia-nccl-cu11", system_module);
  REQUIRE(first);
  CHECK(first->version == "2.14.3");  // /usr/local before /usr; python3.12's and the venv's are other interpreters'
  Distribution venv_module = dist("cupy-cuda11x", "13.6.0", "/opt/venv/lib/python3.11/site-packages");
  CHECK(first_on_sys_path(installed, "nvidia-nccl-cu11", venv_module)->version == "2.19.3");
  CHECK_FALSE(first_on_sys_path(installed, "nvidia-nccl-cu12", system_module));
  installed.pop_back();
  CHECK_FALSE(first_on_sys_path(installed, "nvidia-nccl-cu11", venv_module));  // the system's are not the venv's
  venv_module.system_site_prefix = "/usr";  // unless its pyvenv.cfg includes them, after its own
  CHECK(first_on_sys_path(installed, "nvidia-nccl-cu11", venv_module)->version == "2.14.3");
  CHECK(sys_path_of(venv_module, installed) ==
        std::vector<std::string_view>{"/opt/venv/lib/python3.11/site-packages", "/usr/local/lib/python3.11/dist-packages",
                                      "/usr/lib/python3/dist-packages"});
  installed.push_back(dist("nvidia-nccl-cu11", "2.19.3", "/opt/venv/lib/python3.11/site-packages"));
  Distribution base_module = dist("cupy-cuda11x", "13.6.0", "/usr/lib/python3.11/dist-packages");
  CHECK(first_on_sys_path(installed, "nvidia-nccl-cu11", base_module)->version == "2.14.3");
  base_module.venv_prefix = "/opt/venv";  // imported by the venv's interpreter, which reads the venv first
  CHECK(first_on_sys_path(installed, "nvidia-nccl-cu11", base_module)->version == "2.19.3");
  CHECK(on_one_sys_path("/usr/lib/python3/dist-packages", "/usr/local/lib/python3.12/dist-packages"));  // Debian's python3
  CHECK_FALSE(on_one_sys_path("/usr/lib/python3.11/dist-packages", "/usr/local/lib/python3.12/dist-packages"));
  CHECK_FALSE(on_one_sys_path("/a/lib/python3.11/site-packages", "/b/lib/python3.11/site-packages"));
  CHECK_FALSE(on_one_sys_path("/usr/lib/python3/dist-packages", "/usr/local/lib/python2.7/dist-packages"));
  CHECK_FALSE(on_one_sys_path("/usr/lib/python3/dist-packages", "/usr/local/lib/python3.11/site-packages"));  // python:3.11's
  CHECK(on_one_sys_path("/usr/lib64/python3.12/site-packages", "/usr/local/lib/python3.12/site-packages"));  // Fedora's
}

TEST_CASE("version specifiers (PEP 440 subset)") {
  CHECK(version_satisfies("9.1.0.70", "==9.1.0.70"));
  CHECK_FALSE(version_satisfies("9.0.0.312", "==9.1.0.70"));
  CHECK(version_satisfies("2.3.0+cu121", "==2.3.0"));
  CHECK(version_satisfies("12.1.105", ">=12.1,<13"));
  CHECK_FALSE(version_satisfies("13.0.1", ">=12.1,<13"));
  CHECK(version_satisfies("12.4.1", "==12.*"));
  CHECK_FALSE(version_satisfies("11.8.0", "==12.*"));
  CHECK(version_satisfies("2.2.5", "~=2.2"));
  CHECK_FALSE(version_satisfies("3.0", "~=2.2"));
  CHECK(version_satisfies("1.0", "!=1.1"));
}

TEST_CASE("the lowest release a specifier list admits") {
  auto floor = [](std::string_view spec) {
    auto v = specifier_floor(spec);
    return v ? v->str() : std::string("none");
  };
  CHECK(floor("<10.0,>=9.12.0.46") == "9.12.0.46");
  CHECK(floor(">=9.8") == "9.8");
  CHECK(floor("==9.8.0.87") == "9.8.0.87");
  CHECK(floor("==9.8.*") == "9.8");
  CHECK(floor("~=9.8") == "9.8");
  CHECK(floor(">9.7,<10") == "9.7");
  CHECK(floor("==9.1.0.70+cu12") == "9.1.0.70");
  CHECK(floor("<10") == "none");
  CHECK(floor("!=9.1,<=9.9") == "none");
  CHECK(floor("===9.1") == "none");
  CHECK(floor("") == "none");
  CHECK(floor(">=") == "none");
  CHECK(floor(">=nine") == "none");
}

TEST_CASE("manylinux policies: every row has a source, aliases map, versions are exact") {
  auto policies = load_embedded_policies();
  REQUIRE(policies);
  for (const WheelPolicy& p : policies->policies()) CHECK_MESSAGE(!p.source.empty(), p.name);
  const WheelPolicy* p2014 = policies->find("manylinux2014");
  REQUIRE(p2014);
  CHECK(p2014->name == "manylinux_2_17");
  CHECK(p2014->symbol_versions.at("x86_64").at("GLIBC").count("2.17"));
  CHECK_FALSE(p2014->symbol_versions.at("x86_64").at("GLIBC").count("2.34"));
  CHECK(p2014->lib_whitelist.count("libc.so.6"));
  CHECK_FALSE(p2014->lib_whitelist.count("libcudart.so.12"));
  CHECK(policies->find("manylinux1")->name == "manylinux_2_5");
  CHECK(policies->find("musllinux_1_2")->libc == "musl");
  const WheelPolicy* musl = policies->find("musllinux_1_2");
  CHECK(musl->allows_library("libc.musl-x86_64.so.1", "x86_64"));  // what "libc.so" stands for there
  CHECK(musl->allows_library("libc.musl-x86.so.1", "i686"));
  CHECK_FALSE(musl->allows_library("libc.musl-x86_64.so.1", "aarch64"));
  CHECK_FALSE(musl->allows_library("libc.so", "x86_64"));
  CHECK(musl->allows_library("libz.so.1", "x86_64"));
  CHECK_FALSE(musl->allows_library("libstdc++.so.6", "x86_64"));
  CHECK(p2014->allows_library("libc.so.6", "x86_64"));
  CHECK_FALSE(p2014->allows_library("libc.musl-x86_64.so.1", "x86_64"));
  CHECK_FALSE(policies->find("linux"));
  CHECK(policies->policies().front().name == "manylinux_2_5");  // the most compatible first

  auto tag = split_platform_tag("manylinux_2_17_x86_64");
  REQUIRE(tag);
  CHECK(tag->policy == "manylinux_2_17");
  CHECK(tag->arch == "x86_64");
  CHECK(split_platform_tag("manylinux2014_aarch64")->policy == "manylinux2014");
  CHECK(split_platform_tag("musllinux_1_2_x86_64")->arch == "x86_64");
  CHECK_FALSE(split_platform_tag("linux_x86_64"));
  CHECK_FALSE(split_platform_tag("manylinux_2_x86_64"));
}

TEST_CASE("an image layer larger than the per-member cap is unpacked: the cap is for the files in the layers") {
  std::string image = depscan::test::fixtures_dir() + "/wheels/image.tar";
  depscan::test::TempDir tmp("image-layer-cap");
  SafeTree top(tmp.str());
  REQUIRE(top.make_dirs("staging"));
  REQUIRE(top.make_dirs("rootfs"));
  SafeTree staging(top.host_path("staging")), rootfs(top.host_path("rootfs"));
  ArchiveLimits limits;
  limits.max_member_bytes = 250000;  // layer 1 is larger; its largest file (ld.so) is not
  limits.max_total_bytes = 16 << 20;
  auto largest_member = depscan::test::run_command("tar -tvf " + depscan::test::shell_quote(image) +
                                                   " | awk '{ print $3 }' | sort -n | tail -1");
  REQUIRE(std::stoull(largest_member.output) > limits.max_member_bytes);  // the premise: a layer over the cap
  ImageUnpack unpacked = unpack_image(image, "image.tar", staging, rootfs, {host_image_platform(), std::nullopt}, limits);
  CHECK(unpacked.ok);
  CHECK(unpacked.layers == 2);
  for (const Finding& f : unpacked.findings) CHECK(f.code != "archive-too-large");
  CHECK(std::filesystem::exists(rootfs.host_path("usr/bin/app")));
  uintmax_t loader_size = 0;  // the premise of the second half: ld.so between the two caps
  for (const auto& entry : std::filesystem::recursive_directory_iterator(rootfs.host_path("")))
    if (entry.is_regular_file() && entry.path().filename().string().starts_with("ld-linux"))
      loader_size = std::max(loader_size, entry.file_size());
  REQUIRE(loader_size > 100000);
  REQUIRE(loader_size <= limits.max_member_bytes);
  limits.max_member_bytes = 100000;  // now ld.so, a file in the layer, is over the cap
  SafeTree rootfs2(top.host_path("rootfs")), staging2(top.host_path("staging"));
  ImageUnpack refused = unpack_image(image, "image.tar", staging2, rootfs2, {host_image_platform(), std::nullopt}, limits);
  bool too_large = false;
  for (const Finding& f : refused.findings) too_large |= f.code == "archive-too-large" && f.message.find("ld-linux") != std::string::npos;
  CHECK(too_large);
}

TEST_CASE("an image layer that is not a tar is not counted as applied") {
  depscan::test::TempDir tmp("image-bad-layer");
  std::string image = tmp.str() + "/image.tar";
  // the fixture image with its second layer's bytes replaced by text
  auto made = depscan::test::run_command(
      "cd " + depscan::test::shell_quote(tmp.str()) + " && mkdir x && tar -C x -xf " +
      depscan::test::shell_quote(depscan::test::fixtures_dir() + "/wheels/image.tar") +
      " && echo 'not a tar' > x/bbbb/layer.tar && tar -C x -cf image.tar manifest.json config.json aaaa bbbb");
  REQUIRE(made.exit_code == 0);
  SafeTree top(tmp.str());
  REQUIRE(top.make_dirs("staging"));
  REQUIRE(top.make_dirs("rootfs"));
  SafeTree staging(top.host_path("staging")), rootfs(top.host_path("rootfs"));
  ImageUnpack unpacked = unpack_image(image, "image.tar", staging, rootfs, {host_image_platform(), std::nullopt});
  CHECK(unpacked.ok);
  CHECK(unpacked.layers_listed == 2);
  CHECK(unpacked.layers == 1);
  auto scan = depscan::test::run_command(depscan::test::shell_quote(depscan::test::depscan_bin()) + " " +
                                         depscan::test::shell_quote(image) + " 2>&1");
  CHECK(scan.output.find("image.tar: 1 of 2 layers applied") != std::string::npos);
}

TEST_CASE("the caps hold for an image's layers together: a layer listed many times is not applied past them") {
  std::string image = depscan::test::fixtures_dir() + "/wheels/image.tar";
  depscan::test::TempDir tmp("image-budget");
  std::string dir = tmp.str() + "/unpacked", repeated = tmp.str() + "/repeated.tar";
  using depscan::test::shell_quote;
  // the fixture image with its manifest's layers listed 50 times over
  REQUIRE(depscan::test::run_command("mkdir " + shell_quote(dir) + " && tar -xf " + shell_quote(image) + " -C " + shell_quote(dir) +
                                     " && python3 -c 'import json,sys; p=sys.argv[1]+\"/manifest.json\"; m=json.load(open(p)); "
                                     "m[0][\"Layers\"]*=50; json.dump(m,open(p,\"w\"))' " + shell_quote(dir) +
                                     " && tar -cf " + shell_quote(repeated) + " -C " + shell_quote(dir) + " .")
              .exit_code == 0);
  SafeTree top(tmp.str());
  REQUIRE(top.make_dirs("staging"));
  REQUIRE(top.make_dirs("rootfs"));
  SafeTree staging(top.host_path("staging")), rootfs(top.host_path("rootfs"));
  ArchiveLimits limits;
  limits.max_total_bytes = 3 * std::filesystem::file_size(image);  // room for the two layers about three times
  ImageUnpack unpacked = unpack_image(repeated, "repeated.tar", staging, rootfs, {host_image_platform(), std::nullopt}, limits);
  CHECK(unpacked.layers < 10);
  bool whole_image = false;
  for (const Finding& f : unpacked.findings)
    whole_image |= f.code == "archive-too-large" && f.message.starts_with("repeated.tar: the layers applied so far declare") &&
                   f.message.find("layers are not applied, refused as a probable archive bomb") != std::string::npos;
  CHECK(whole_image);
}

TEST_CASE("a docker manifest whose Layers is not a list is refused, and a config outside the archive is a warning") {
  std::string image = depscan::test::fixtures_dir() + "/wheels/image.tar";
  depscan::test::TempDir tmp("image-manifest-shapes");
  using depscan::test::shell_quote;
  // the fixture image with its manifest edited by `edit` (python, on the manifest's one entry `e`)
  auto edited = [&](const std::string& name, const std::string& edit) {
    std::string dir = tmp.str() + "/" + name, out = tmp.str() + "/" + name + ".tar";
    REQUIRE(depscan::test::run_command("mkdir " + shell_quote(dir) + " && tar -xf " + shell_quote(image) + " -C " +
                                       shell_quote(dir) + " && python3 -c 'import json,sys; p=sys.argv[1]+\"/manifest.json\"; "
                                       "m=json.load(open(p)); e=m[0]; " + edit + "; json.dump(m,open(p,\"w\"))' " +
                                       shell_quote(dir) + " && tar -cf " + shell_quote(out) + " -C " + shell_quote(dir) + " .")
                .exit_code == 0);
    return out;
  };
  auto unpack = [&](const std::string& archive) {
    static int n = 0;
    std::string top_dir = tmp.str() + "/unpack" + std::to_string(++n);
    std::filesystem::create_directories(top_dir + "/staging");
    std::filesystem::create_directories(top_dir + "/rootfs");
    SafeTree staging(top_dir + "/staging"), rootfs(top_dir + "/rootfs");
    return unpack_image(archive, "image.tar", staging, rootfs, {host_image_platform(), std::nullopt}, ArchiveLimits{});
  };
  auto has = [](const ImageUnpack& u, Severity severity, const std::string& text) {
    for (const Finding& f : u.findings)
      if (f.code == "image-invalid" && f.severity == severity && f.message.find(text) != std::string::npos) return true;
    return false;
  };
  ImageUnpack as_string = unpack(edited("layers-string", "e[\"Layers\"]=e[\"Layers\"][0]"));
  CHECK_FALSE(as_string.ok);
  CHECK(has(as_string, Severity::Error, "manifest.json's Layers is not a list of layer names"));
  ImageUnpack as_object = unpack(edited("layers-object", "e[\"Layers\"]={\"a\": e[\"Layers\"][0]}"));
  CHECK(has(as_object, Severity::Error, "manifest.json's Layers is not a list of layer names"));
  ImageUnpack outside = unpack(edited("config-outside", "e[\"Config\"]=\"../../etc/passwd\""));
  CHECK(outside.ok);
  CHECK(outside.layers == 2);
  CHECK(has(outside, Severity::Warning, "the config '../../etc/passwd' the manifest names is missing, outside the archive"));
  CHECK_FALSE(outside.environment.config_read);
  ImageUnpack fine = unpack(image);
  for (const Finding& f : fine.findings) CHECK(f.code != "image-invalid");
}

TEST_CASE("an image config's Env: LD_LIBRARY_PATH and LD_PRELOAD, the last setting winning, odd shapes ignored") {
  using nlohmann::json;
  auto env = environment_of_config(json::parse(R"({"config": {"Env": [
      "LD_LIBRARY_PATH=/first", 7, null, "LD_PRELOAD=libx.so", "LD_LIBRARY_PATH_EXTRA=/no", "LD_LIBRARY_PATH=/a:/b=c",
      "GLIBC_TUNABLES=glibc.rtld.optional_static_tls=4096"], "WorkingDir": "/srv"}})"));
  CHECK(env.config_read);
  CHECK(env.ld_library_path == "/a:/b=c");
  CHECK(env.ld_preload == "libx.so");
  CHECK(env.glibc_tunables == "glibc.rtld.optional_static_tls=4096");
  CHECK(env.working_dir == "/srv");
  CHECK_FALSE(env.bind_now);
  CHECK(environment_of_config(json::parse(R"({"config": {"Env": ["LD_BIND_NOW=1"]}})")).bind_now);
  CHECK_FALSE(environment_of_config(json::parse(R"({"config": {"Env": ["LD_BIND_NOW="]}})")).bind_now);
  CHECK(environment_of_config(json::parse(R"({"config": {"WorkingDir": "relative"}})")).working_dir == "/");
  for (const char* odd : {R"({"config": {"Env": "LD_LIBRARY_PATH=/x"}})", R"({"config": []})", R"({})", R"({"Env": ["LD_PRELOAD=y"]})"}) {
    CAPTURE(odd);
    auto none = environment_of_config(json::parse(odd));
    CHECK(none.config_read);
    CHECK(none.ld_library_path.empty());
    CHECK(none.ld_preload.empty());
  }
  CHECK_FALSE(environment_of_config(json::array()).config_read);
  // a legacy image's CUDA_VERSION as the toolkit's semver reads it: cuda>=major.minor, or a hook failure
  auto legacy = [](const char* version) {
    auto requirements = environment_of_config(json{{"config", {{"Env", {std::string("CUDA_VERSION=") + version}}}}}).requirements;
    return requirements.variables.empty() ? "error: " + requirements.legacy_version_error : requirements.variables[0].second;
  };
  CHECK(legacy("11.0.3") == "cuda>=11.0");
  CHECK(legacy("12") == "cuda>=12.0");
  CHECK(legacy("v12.4-1") == "cuda>=12.4");
  CHECK(legacy("12.4.1.3") == "error: 12.4.1.3");
  CHECK(legacy("12.4.1-") == "error: 12.4.1-");
  CHECK(legacy("1.2.3+a+b") == "error: 1.2.3+a+b");
  CHECK(legacy("12.4.1-rc.1+build.5") == "cuda>=12.4");
  CHECK(legacy("twelve") == "error: twelve");
  CHECK_FALSE(environment_of_config(json("text")).config_read);
}

TEST_CASE("an image config's NVIDIA_DRIVER_CAPABILITIES: unset, empty or set, and whether the image is a legacy CUDA image") {
  using nlohmann::json;
  auto env = [](std::vector<std::string> settings) { return environment_of_config(json{{"config", {{"Env", settings}}}}); };
  CHECK_FALSE(env({}).driver_capabilities);
  CHECK(env({"NVIDIA_DRIVER_CAPABILITIES="}).driver_capabilities == std::optional<std::string>(""));
  CHECK(env({"NVIDIA_DRIVER_CAPABILITIES=video", "NVIDIA_DRIVER_CAPABILITIES=compute,utility"}).driver_capabilities ==
        std::optional<std::string>("compute,utility"));
  CHECK(env({"CUDA_VERSION=12.4.1"}).legacy_cuda_image);
  CHECK(env({"CUDA_VERSION=12.4.1", "NVIDIA_REQUIRE_CUDA="}).legacy_cuda_image);  // empty counts as unset
  CHECK_FALSE(env({"CUDA_VERSION=12.4.1", "NVIDIA_REQUIRE_CUDA=cuda>=12.4"}).legacy_cuda_image);
  CHECK_FALSE(env({"CUDA_VERSION="}).legacy_cuda_image);
}

TEST_CASE("archive reader: the entry `tar -C DIR -c .` writes for DIR itself is passed over without a finding") {
  depscan::test::TempDir tmp("dot-root");
  auto made = depscan::test::run_command("cd " + depscan::test::shell_quote(tmp.str()) +
                                         " && mkdir -p in/usr && echo x > in/usr/f && tar -C in -cf dot.tar . && "
                                         "tar -tf dot.tar | head -1");
  REQUIRE(made.exit_code == 0);
  REQUIRE(made.output == "./\n");
  auto reader = ArchiveReader::open(tmp.str() + "/dot.tar", "dot.tar");
  REQUIRE(reader);
  std::vector<std::string> names;
  while (auto member = (*reader)->next()) names.push_back(member->name);
  CHECK(names == std::vector<std::string>{"usr", "usr/f"});
  CHECK((*reader)->findings().empty());
  for (const char* name : {".", "./", ".//.", "./."}) CHECK(safe_relative_name(name).error().find("archive root") != std::string::npos);
}

TEST_CASE("archive reader: a member name with non-ASCII characters (UTF-8 in a wheel) is read as written") {
  depscan::test::TempDir tmp("utf8-names");
  std::string wheel = tmp.str() + "/pure-1.0-py3-none-any.whl";
  auto made = depscan::test::run_command(
      "python3 -c 'import sys, zipfile\nwith zipfile.ZipFile(sys.argv[1], \"w\") as z:\n"
      " z.writestr(\"pure/donn\\u00e9es.txt\", \"x\")\n z.writestr(\"pure/caf\\u00e9/lib.so\", \"y\")' " +
      depscan::test::shell_quote(wheel));
  REQUIRE(made.exit_code == 0);
  auto reader = ArchiveReader::open(wheel, "pure.whl");
  REQUIRE(reader);
  std::vector<std::string> names;
  while (auto member = (*reader)->next()) names.push_back(member->name);
  CHECK(names == std::vector<std::string>{"pure/donn\u00e9es.txt", "pure/caf\u00e9/lib.so"});
  CHECK((*reader)->findings().empty());
}

TEST_CASE("archive reader: a member libarchive cannot decode is lost alone, the members after it are read") {
  depscan::test::TempDir tmp("bad-member");
  std::string wheel = tmp.str() + "/bad.whl";
  // zipfile writes the members; the first one's compression method becomes 99 in both its headers
  auto made = depscan::test::run_command(
      "python3 -c 'import struct, sys, zipfile\n"
      "with zipfile.ZipFile(sys.argv[1], \"w\") as z:\n z.writestr(\"pkg/bad.txt\", \"x\" * 100)\n"
      " z.writestr(\"pkg/good.txt\", \"y\")\n"
      "d = bytearray(open(sys.argv[1], \"rb\").read())\n"
      "for sig, at in ((b\"PK\\x03\\x04\", 8), (b\"PK\\x01\\x02\", 10)):\n"
      " i = d.find(sig)\n struct.pack_into(\"<H\", d, i + at, 99)\n"
      "open(sys.argv[1], \"wb\").write(d)' " + depscan::test::shell_quote(wheel));
  REQUIRE(made.exit_code == 0);
  auto reader = ArchiveReader::open(wheel, "bad.whl");
  REQUIRE(reader);
  SafeTree tree(tmp.str());
  std::vector<std::string> extracted, lost;
  while (auto member = (*reader)->next()) {
    auto written = (*reader)->extract(tree, member->name);
    (written ? extracted : lost).push_back(member->name);
    if (!written) CHECK_MESSAGE(written.error().find("data unreadable: Unsupported ZIP compression method") == 0, written.error());
    CHECK((*reader)->member_corrupt() == !written);  // the caller reports it as archive-corrupt
  }
  CHECK(lost == std::vector<std::string>{"pkg/bad.txt"});
  CHECK(extracted == std::vector<std::string>{"pkg/good.txt"});
  CHECK_FALSE((*reader)->failed());
}

TEST_CASE("archive reader: member count cap and encrypted members") {
  std::string dir = depscan::test::fixtures_dir() + "/wheels/";
  ArchiveLimits few;
  few.max_members = 3;
  auto reader = ArchiveReader::open(dir + "zipslip-1.0-py3-none-any.whl", "zipslip.whl", few);
  REQUIRE(reader);
  while ((*reader)->next()) {
  }
  CHECK((*reader)->failed());
  bool capped = false;
  for (const Finding& f : (*reader)->findings()) capped |= f.code == "archive-too-many-members";
  CHECK(capped);

  auto encrypted = ArchiveReader::open(dir + "encrypted-1.0-py3-none-any.whl", "encrypted.whl");
  REQUIRE(encrypted);
  CHECK_FALSE((*encrypted)->next());  // the only member is refused
  bool reported = false;
  for (const Finding& f : (*encrypted)->findings())
    reported |= f.code == "archive-encrypted-member" && f.message.find("encrypted/libcudart.so.12") != std::string::npos;
  CHECK(reported);
}
