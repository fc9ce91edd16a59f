#!/usr/bin/env python3
"""Compares depscan --root ROOT with ROOT's own loader, run inside it with chroot (needs root), or
for a root of another machine under qemu-MACHINE -L ROOT (which opens the loader's files inside ROOT).

For every regular ELF executable or library of the root's class, byte order and machine under ROOT:
  libraries: the file each NEEDED name resolves to, against `ld.so --list` (the root's ld.so);
  symbols:   the undefined symbols and missing symbol versions, against `ldd -r` (LD_BIND_NOW).
Prints each disagreement and a count. Exit code 1 when any file disagrees.

Usage: scripts/compare-root-loader.py ROOT [--depscan build/cli/depscan] [--machine aarch64|ppc64le|s390x|arm|riscv64]
A root to try: debootstrap --variant=minbase bookworm /tmp/rootfs http://deb.debian.org/debian
An aarch64 one (apt-get install debootstrap; qemu-user comes with scripts/install-deps.sh):
debootstrap --arch=arm64 --foreign --variant=minbase bookworm /tmp/rootfs-arm64 ...,
then dpkg-deb -x each of its var/cache/apt/archives/*.deb into it and run its ldconfig:
qemu-aarch64 /tmp/rootfs-arm64/sbin/ldconfig -r /tmp/rootfs-arm64 (likewise --arch=ppc64el, s390x,
armhf, and riscv64 with trixie; --machine takes qemu's name: ppc64le, s390x, arm, riscv64)
"""
import argparse
import json
import os
import re
import subprocess
import sys

MACHINES = {  # e_machine, ELF class, byte order and loader of each machine this script can compare
    "x86_64": (62, 2, "little", "/lib64/ld-linux-x86-64.so.2"),
    "aarch64": (183, 2, "little", "/lib/ld-linux-aarch64.so.1"),
    "ppc64le": (21, 2, "little", "/lib64/ld64.so.2"),
    "s390x": (22, 2, "big", "/lib/ld64.so.1"),
    "arm": (40, 1, "little", "/lib/ld-linux-armhf.so.3"),
    "riscv64": (243, 2, "little", "/lib/ld-linux-riscv64-lp64d.so.1"),
}
MACHINE = "x86_64"
TRACE = ["LD_TRACE_LOADED_OBJECTS=1", "LD_WARN=yes", "LD_BIND_NOW=yes"]  # what `ldd -r` sets


def elf_files(root):
    """Logical paths of regular ET_EXEC/ET_DYN files of the machine, hard links counted once."""
    machine, elf_class, order, _ = MACHINES[MACHINE]
    seen, out = set(), []
    for directory, dirs, names in os.walk(root):
        if os.path.relpath(directory, root).split("/")[0] in ("proc", "sys", "dev"):
            dirs[:] = []
            continue
        for name in names:
            path = os.path.join(directory, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            st = os.stat(path)
            try:
                with open(path, "rb") as f:
                    head = f.read(20)
            except OSError:
                continue
            if (st.st_dev, st.st_ino) in seen or len(head) < 20 or head[:4] != b"\x7fELF" or head[4] != elf_class:
                continue
            if head[5] != (1 if order == "little" else 2) or int.from_bytes(head[16:18], order) not in (2, 3) \
                    or int.from_bytes(head[18:20], order) != machine:
                continue  # not an executable or library of the root's kind
            seen.add((st.st_dev, st.st_ino))
            out.append("/" + os.path.relpath(path, root))
    return sorted(out)


def in_root(root, *argv):
    try:
        r = subprocess.run(["chroot", root, *argv], capture_output=True, text=True, timeout=60,
                           env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
    except subprocess.TimeoutExpired:
        return ""
    return r.stdout + r.stderr


def file_in_root(root, path):
    """ROOT + path with symbolic links followed as inside ROOT (absolute targets stay in it)."""
    for _ in range(40):
        full = root + path
        if not os.path.islink(full):
            return full
        target = os.readlink(full)
        path = target if target.startswith("/") else os.path.join(os.path.dirname(path), target)
    return root + path


def run_loader(root, path, trace_env=()):
    """The root's loader on `path`: --list, or with `trace_env` as ldd -r runs it."""
    loader = MACHINES[MACHINE][3]
    if MACHINE == "x86_64":
        return in_root(root, "env", *trace_env, loader, path) if trace_env else in_root(root, loader, "--list", path)
    env_options = [option for variable in trace_env for option in ("-E", variable)]
    argv = ["qemu-" + MACHINE, "-L", root, *env_options, file_in_root(root, loader)] + ([path] if trace_env else ["--list", path])
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return ""
    return r.stdout + r.stderr


def depscan_report(depscan, root, path, *options):
    r = subprocess.run([depscan, "--root", root, "--no-dlopen", "--format", "json", *options, path],
                       capture_output=True, text=True, timeout=120)
    return json.loads(r.stdout)


def library_differences(root, depscan, path):
    loader = {}
    for line in run_loader(root, path).splitlines():
        if "=>" in line:
            name, target = (part.strip() for part in line.split("=>", 1))
            if name != MACHINES[MACHINE][3]:  # some machines' listings name the program's loader with "=>" too
                loader[name] = target.split(" (")[0].strip()
    if not loader:
        return None  # the loader listed nothing (it refused the file): nothing to compare
    report = depscan_report(depscan, root, path, "--no-symbols")
    ours = {}
    for edge in report["edges"]:
        if edge.get("kind") == "needed":
            to = edge.get("to")
            ours.setdefault(edge["name"], report["objects"][to]["path"] if to is not None else "not found")
    out = []
    for name, target in loader.items():
        got = ours.get(name, "no edge")
        if got != "not found" and target != "not found":
            got, target = os.path.normpath(got), os.path.normpath(target)
        if got != target:
            out.append(f"{name}: loader {target}, depscan {got}")
    return out


def symbol_counts(report, path):
    undefined = versions = 0
    for finding in report["findings"]:
        if finding.get("path") != path:
            continue
        message = finding["message"]
        if finding["code"] == "undefined-symbol":
            more = re.search(r"undefined symbol: \S+? and (\d+) more", message)
            undefined += 1 + int(more.group(1)) if more else 1
        elif finding["code"] == "python-extension":  # the interpreter defines them: counted, not errors
            count = re.search(r"its (\d+) Python C-API symbols?", message)
            undefined += int(count.group(1)) if count else 0
        elif finding["code"] == "symbol-version-not-found":
            versions += 1
    return undefined, versions


def symbol_differences(root, depscan, path):
    text = run_loader(root, path, TRACE)
    undefined = len(set(re.findall(r"undefined symbol: (\S+)\s+\(" + re.escape(path) + r"\)", text)))
    versions = len(re.findall(r"version `[^']+' not found \(required by " + re.escape(path) + r"\)", text))
    ours = symbol_counts(depscan_report(depscan, root, path, "--bind-now"), path)
    if (undefined, versions) == ours:
        return []
    return [f"ldd -r: {undefined} undefined symbols, {versions} versions not found; depscan: {ours[0]}, {ours[1]}"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root")
    parser.add_argument("--depscan", default=os.path.join(os.path.dirname(__file__), "..", "build", "cli", "depscan"))
    parser.add_argument("--machine", choices=sorted(MACHINES), default="x86_64")
    args = parser.parse_args()
    global MACHINE
    MACHINE = args.machine
    root, depscan = os.path.abspath(args.root), os.path.abspath(args.depscan)
    files = elf_files(root)
    failed = 0
    for check, compare in (("libraries", library_differences), ("symbols", symbol_differences)):
        differing = unanswered = 0
        for path in files:
            try:
                problems = compare(root, depscan, path)
            except (subprocess.TimeoutExpired, json.JSONDecodeError) as error:
                problems = [f"depscan gave no report: {error}"]
            if problems is None:
                unanswered += 1
            elif problems:
                differing += 1
                print(f"{check} differ: {path}")
                for problem in problems:
                    print(f"    {problem}")
        compared = len(files) - unanswered
        print(f"{check}: {compared - differing} of {compared} files agree"
              + (f" ({unanswered} more the loader did not list)" if unanswered else ""))
        failed += differing
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
