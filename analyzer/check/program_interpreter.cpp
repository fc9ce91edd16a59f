// The kernel, not ld.so, opens a program's PT_INTERP (fs/binfmt_elf.c). If that file is missing,
// not executable, not ELF or built for another class or machine, execve fails before any library
// is looked for: "No such file or directory" (ENOENT) for a program that is plainly there, or
// "Accessing a corrupted shared library" (ELIBBAD). Each root program is checked here.
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "analyzer/check/check.h"
#include "analyzer/input/sniff.h"
#include "analyzer/resolve/system_layout.h"
#include "analyzer/util/bytes.h"

namespace depscan {
namespace {

constexpr uint16_t kEtExec = 2, kEtDyn = 3;
constexpr uint32_t kAnyExecuteBit = 0111;

std::string class_name(uint8_t elf_class) {
  return elf_class == 1 ? "ELFCLASS32" : elf_class == 2 ? "ELFCLASS64" : fmt::format("ELF class {}", elf_class);
}

// What the kernel finds wrong with the interpreter's ELF header for this program, if anything.
std::optional<std::string> header_problem(ByteView head, const Binary& program) {
  if (sniff_bytes(head) != FileFormat::Elf) return std::string("is not an ELF file");
  uint8_t elf_class = *head.read<uint8_t>(4);
  if (head.size() < (elf_class == 1 ? 52u : 64u)) return std::string("is too short to be an ELF file");
  uint8_t program_class = program.bits == 32 ? 1 : 2;
  if (elf_class != program_class)
    return fmt::format("is {}, the program {}", class_name(elf_class), class_name(program_class));
  bool little_endian = *head.read<uint8_t>(5) == 1;
  if (little_endian != program.little_endian) return std::string("has the other byte order");
  uint16_t type = *head.read<uint16_t>(16, little_endian), machine = *head.read<uint16_t>(18, little_endian);
  if (machine != program.machine)
    return fmt::format("is built for e_machine {}, the program for e_machine {}", machine, program.machine);
  if (type != kEtExec && type != kEtDyn) return fmt::format("is not a loadable ELF file (e_type {})", type);
  return std::nullopt;
}

// Why the kernel cannot start a program whose PT_INTERP is `interp`, or nothing.
std::optional<std::string> interpreter_problem(const FileSystem& fs, const std::string& interp, const Binary& program) {
  auto info = fs.stat(interp);
  if (!info) return fmt::format("cannot be opened ({})", info.error());
  if (info->kind != FileKind::Regular) return std::string("is not a regular file");
  if ((info->mode & kAnyExecuteBit) == 0) return std::string("has no execute permission");
  auto head = fs.read_head(interp, 64);
  if (!head) return fmt::format("cannot be read ({})", head.error());
  return header_problem(ByteView(reinterpret_cast<const uint8_t*>(head->data()), head->size()), program);
}

std::string fix_for(const std::string& interp, bool missing, const Binary& program) {
  std::string system_loader = default_interpreter(process_abi_of(program));
  std::string repoint = system_loader.empty() || interp == system_loader
                            ? std::string()
                            : fmt::format(", or point the program at the system's loader with patchelf --set-interpreter {}",
                                          system_loader);
  if (!missing) return fmt::format("replace {} with the dynamic loader this program was built for{}", interp, repoint);
  if (interp.find("ld-musl-") != std::string::npos)
    return fmt::format("the program was linked against musl libc (Alpine): run it where musl provides {}, or rebuild it "
                       "against glibc", interp);
  if (interp.rfind("/nix/store/", 0) == 0)
    return fmt::format("the program was built by Nix against its own glibc: run it where that store path exists{}", repoint);
  return fmt::format("install the C library that provides {}{}", interp, repoint);
}

Finding relative_interpreter(size_t object, const Object& program) {
  return Finding{"program-interpreter-relative", Severity::Warning, object,
                 fmt::format("{}: its program interpreter {} is a relative path: the kernel opens it from the "
                             "working directory, so the program starts only where that path exists",
                             program.path, program.binary->interpreter),
                 "relink with an absolute --dynamic-linker, or patchelf --set-interpreter to an absolute path", ""};
}

Finding unstartable(size_t object, const Object& program, const std::string& problem) {
  const Binary& b = *program.binary;
  // glibc loads a library with a PT_INTERP (libc.so.6) without looking at it; not a PIE (DF_1_PIE).
  bool library = b.soname.has_value() && !(b.dt_flags_1 & kDf1Pie);
  std::string fix = fix_for(b.interpreter, problem.rfind("cannot be opened", 0) == 0, b);
  return Finding{"program-interpreter", library ? Severity::Warning : Severity::Error, object,
                 fmt::format("{}: {}: its program interpreter {} {}", program.path,
                             library ? "cannot be run as a program (it still loads as a library)"
                                     : "the kernel cannot start it",
                             b.interpreter, problem),
                 library ? "nothing to do for loading it as a library; to run it, " + fix : fix, ""};
}

}  // namespace

std::vector<Finding> check_program_interpreters(const CheckContext& ctx) {
  std::vector<Finding> out;
  // An audit's programs share a few loaders: each is looked at once per program class and machine.
  std::map<std::tuple<std::string, int, uint16_t, bool>, std::optional<std::string>> problems;
  for (size_t object : ctx.graph.roots) {
    const Object& program = ctx.graph.objects[object];
    if (!program.binary || program.binary->format != Format::Elf) continue;
    const std::string& interp = program.binary->interpreter;
    if (interp.empty()) continue;  // a static program, or a library
    if (interp.front() != '/') {
      out.push_back(relative_interpreter(object, program));
      continue;
    }
    const Binary& b = *program.binary;
    auto [it, added] = problems.try_emplace({interp, b.bits, b.machine, b.little_endian});
    if (added) it->second = interpreter_problem(ctx.fs, interp, b);
    if (it->second) out.push_back(unstartable(object, program, *it->second));
  }
  return out;
}

}  // namespace depscan
