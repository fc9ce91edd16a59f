// `depscan why FILE LIBNAME`: every candidate, in order, with why it was taken or skipped.
#include <doctest/doctest.h>

#include "resolve_support.h"

namespace depscan::test {

TEST_CASE("why: an inherited RPATH finds the library") {
  CommandResult r = run_command(depscan_bin() + " why " + shell_quote(resolve_fixture("chain/exe_rpath")) + " libb.so 2>&1");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("libb.so requested by " + resolve_fixture("chain/lib1/liba.so")) != std::string::npos);
  CHECK(r.output.find(resolve_fixture("chain/lib1") + "/libb.so: not found") != std::string::npos);
  CHECK(r.output.find(resolve_fixture("chain/lib2") + "/libb.so: taken") != std::string::npos);
  CHECK(r.output.find("[rpath of exe_rpath]") != std::string::npos);
  // First, whose rules: this machine's glibc, with glibc-hwcaps (2.33 and later).
  CHECK(r.output.rfind("loader /lib64/ld-linux-x86-64.so.2: glibc 2.", 0) == 0);
  CHECK(r.output.find("glibc-hwcaps subdirectories;") != std::string::npos);
}

TEST_CASE("why: RUNPATH is not inherited, so the search fails, step by step") {
  CommandResult r = run_command(depscan_bin() + " why " + shell_quote(resolve_fixture("chain/exe_runpath")) + " libb.so 2>&1");
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("ld.so.cache: no entry for libb.so") != std::string::npos);
  CHECK(r.output.find("/usr/lib/x86_64-linux-gnu/libb.so: not found") != std::string::npos);
  CHECK(r.output.find("NOT FOUND") != std::string::npos);
}

TEST_CASE("why: wrong-class candidates are shown as skipped; options are honoured") {
  CommandResult r = run_command(depscan_bin() + " why " + shell_quote(resolve_fixture("wc/exe")) + " libw.so 2>&1");
  INFO(r.output);
  CHECK(r.output.find("skipped: wrong ELF class: ELFCLASS32") != std::string::npos);
  CommandResult llp = run_command(depscan_bin() + " why --ld-library-path " + shell_quote(resolve_fixture("llp/env")) +
                                  " " + shell_quote(resolve_fixture("llp/exe_runpath")) + " libl.so 2>&1");
  INFO(llp.output);
  CHECK(llp.output.find(resolve_fixture("llp/env") + "/libl.so: taken") != std::string::npos);
  CommandResult none = run_command(depscan_bin() + " why " + shell_quote(resolve_fixture("bfs/exe")) + " libnothing.so 2>&1");
  CHECK(none.exit_code == 1);
  CHECK(none.output.find("is not requested by anything") != std::string::npos);
  CHECK(none.output.find("\n  => NOT FOUND: cannot open shared object file") != std::string::npos);  // a conclusion,
  CHECK(none.output.find(". libnothing.so: not found") == std::string::npos);                     // not a candidate
  CommandResult unasked = run_command(depscan_bin() + " why --no-color " + shell_quote(resolve_fixture("llp/exe_runpath")) +
                                      " libc.so.6 2>&1");  // --no-color as the scan takes it
  CHECK(unasked.exit_code == 0);
  CommandResult scan_option = run_command(depscan_bin() + " why --gpu H100 " + shell_quote(resolve_fixture("bfs/exe")) +
                                          " libc.so.6 2>&1");
  CHECK(scan_option.exit_code == 2);
  CHECK(scan_option.output == "depscan why: --gpu is not an option of 'why' (depscan why --help lists them)\n");
  CommandResult bad = run_command(depscan_bin() + " why /nonexistent/file libc.so.6 2>&1");
  CHECK(bad.exit_code == 2);
  // Before the subcommand's name they would belong to the scan, which does not run: refused, not dropped.
  CommandResult misplaced = run_command(depscan_bin() + " --ld-library-path " + shell_quote(resolve_fixture("llp/env")) +
                                        " why " + shell_quote(resolve_fixture("llp/exe_runpath")) + " libl.so 2>&1");
  CHECK(misplaced.exit_code == 2);
  CHECK_MESSAGE(misplaced.output == "depscan: --ld-library-path before 'why': a subcommand's options go after its name "
                                    "(depscan why --root DIR ...)\n", misplaced.output);
}

TEST_CASE("why: a library opened with dlopen is explained from the object that opens it") {
  std::string sysroot = shell_quote(fixtures_dir() + "/cuda/sysroot");
  CommandResult cnn = run_command(depscan_bin() + " why --root " + sysroot + " /opt/bin/app9 libcudnn_cnn.so.9 2>&1");
  INFO(cnn.output);
  CHECK(cnn.exit_code == 0);
  CHECK(cnn.output.find("libcudnn_cnn.so.9 requested by /opt/cudnn9/lib/libcudnn.so.9 (dlopen)") != std::string::npos);
  CHECK(cnn.output.find("opened at run time with dlopen: matrix: libcudnn.so.9 tries") != std::string::npos);
  CHECK(cnn.output.find("=> found /opt/cudnn9/lib/libcudnn_cnn.so.9") != std::string::npos);
  CommandResult driver = run_command(depscan_bin() + " why --root " + sysroot + " /opt/bin/app9 libcuda.so.1 2>&1");
  INFO(driver.output);
  CHECK(driver.exit_code == 1);
  CHECK(driver.output.find("libcuda.so.1 requested by /opt/cuda13/libcudart.so.13 (dlopen)") != std::string::npos);
  CHECK(driver.output.find("/usr/lib/x86_64-linux-gnu/libcuda.so.1: not found") != std::string::npos);
  CommandResult load_time = run_command(depscan_bin() + " why --no-dlopen --root " + sysroot + " /opt/bin/app9 libcudnn_cnn.so.9 2>&1");
  CHECK(load_time.output.find("is not requested by anything") != std::string::npos);
}

}  // namespace depscan::test
