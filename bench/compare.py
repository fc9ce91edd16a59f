#!/usr/bin/env python3
"""Runs depscan and its peers (libtree, lddtree, ldd) on the same file sets in one run and prints
median wall time and peak RSS side by side, with ratios against depscan.

usage: bench/compare.py [--runs N] [--depscan PATH] [--set NAME=DIR ...] [--cold NAME ...]
Peers that are not installed are skipped (scripts/install-deps.sh installs libtree and pax-utils).
A set named with --cold (default: cuda; "--cold none" for no cold rows) is measured a second time
as NAME-cold, with its ELF files dropped from the page cache before every run (POSIX_FADV_DONTNEED,
no root needed): files just pulled onto a machine. Libraries outside the set that running
programs map (libc), directories, inodes and the set's other files stay cached, so the
"depscan DIR" row of a cold set is only partly cold.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ELF_MAGIC = b"\x7fELF"


def elf_files(directory, recursive):
    """Every regular ELF file (symlinks to the same file counted once) under directory."""
    seen, out = set(), []
    walker = os.walk(directory) if recursive else [(directory, [], os.listdir(directory))]
    for root, _dirs, names in walker:
        for name in sorted(names):
            path = os.path.join(root, name)
            try:
                st = os.stat(path)
                if not os.path.isfile(path) or (st.st_dev, st.st_ino) in seen:
                    continue
                with open(path, "rb") as f:
                    if f.read(4) != ELF_MAGIC:
                        continue
            except OSError:
                continue
            seen.add((st.st_dev, st.st_ino))
            out.append(path)
    return out


def evict(files):
    """Drops the files' pages from the page cache (clean pages of files no process maps)."""
    for path in files:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue  # gone since the set was listed: the tools will say so
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def measure(argv, env, cold_files=None):
    """Wall seconds (perf_counter around the run) and peak RSS in KiB (GNU time: a small parent,
    so the child's maximum resident size is its own, not a copy of this Python's). cold_files are
    evicted from the page cache first."""
    if cold_files is not None:
        evict(cold_files)
    with tempfile.NamedTemporaryFile("r") as stats:
        cmd = ["/usr/bin/time", "-o", stats.name, "-f", "%M"] + argv
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        wall = time.perf_counter() - start
        return wall, int(stats.read().split()[-1])


def tools(depscan, files, extra, directory=None):
    """Command lines of every available tool over the same files ("depscan DIR": the directory
    audit, which finds the files itself, skipping symlinks and relocatable objects)."""
    candidates = {
        "depscan": [depscan, "--format", "json"] + extra + files,
        # the same without the run-time (dlopen) edges, whose .rodata scan reads 140 MB on CUDA
        "depscan-nodl": [depscan, "--format", "json", "--no-dlopen"] + extra + files,
        # libtree's job: the tree as text, no symbol tables read, no dlopen edges
        "depscan-tree": [depscan, "--no-symbols", "--no-dlopen", "--no-color"] + extra + files,
        **({"depscan DIR": [depscan, "--format", "json"] + extra + [directory]} if directory else {}),
        # libtree shows each library once per run: dependencies already shown under an earlier
        # file are left out of the later files' trees. -vvv expands every library wherever it
        # appears, so each file's tree is complete (depscan resolves each library once per file).
        "libtree": ["libtree"] + files,
        "libtree -vvv": ["libtree", "-vvv"] + files,
        "lddtree": ["/usr/bin/python3", "/usr/bin/lddtree"] + files,  # Debian's python has pyelftools
        "ldd": ["ldd"] + files,
    }
    return {name: argv for name, argv in candidates.items() if shutil.which(argv[0]) or os.path.exists(argv[0])}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--depscan", default=os.path.join(os.path.dirname(__file__), "..", "build", "cli", "depscan"))
    ap.add_argument("--set", action="append", default=[], help="NAME=DIR[:recursive]")
    ap.add_argument("--depscan-args", default="", help="extra depscan arguments, e.g. --no-symbols")
    ap.add_argument("--cold", action="append", default=None, help="NAME of a set to measure again with a cold page cache")
    a = ap.parse_args()
    sets = a.set or ["cuda=/usr/local/cuda/lib64", "system=/usr/lib/x86_64-linux-gnu:recursive"]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C"}
    print(f"{'set':11} {'tool':13} {'files':>6} {'median s':>9} {'peak MiB':>9} {'time/depscan':>13} {'rss/depscan':>12}")
    cold_sets = ["cuda"] if a.cold is None else [n for n in a.cold if n != "none"]
    unknown = set(cold_sets) - {spec.partition("=")[0] for spec in sets}
    if unknown:
        ap.error(f"--cold names no measured set: {', '.join(sorted(unknown))}")
    for spec in sets:
        name, _, rest = spec.partition("=")
        directory, _, mode = rest.partition(":")
        files = elf_files(directory, mode == "recursive")
        audit_dir = directory if mode == "recursive" else None
        argvs = tools(os.path.abspath(a.depscan), files, a.depscan_args.split(), audit_dir)
        print_rows(name, len(files), medians_of(argvs, env, a.runs))
        if name in cold_sets:
            print_rows(f"{name}-cold", len(files), medians_of(argvs, env, a.runs, files))


def medians_of(argvs, env, runs, cold_files=None):
    """Median wall time and peak RSS of each tool. The tools take turns, run after run, so that a
    slow minute of the machine falls on all of them alike."""
    if cold_files is None:
        for argv in argvs.values():
            measure(argv, env)  # warm-up, not counted: the files' pages may have been dropped before
    results = {tool: [] for tool in argvs}
    for _ in range(runs):
        for tool, argv in argvs.items():
            results[tool].append(measure(argv, env, cold_files))
    return {tool: (statistics.median(r[0] for r in rs), statistics.median(r[1] for r in rs))
            for tool, rs in results.items()}


def print_rows(name, file_count, rows):
    base_t, base_m = rows.get("depscan", (None, None))
    for tool, (t, m) in rows.items():
        rt = f"{t / base_t:.2f}x" if base_t else "-"
        rm = f"{m / base_m:.2f}x" if base_m else "-"
        print(f"{name:11} {tool:13} {file_count:6d} {t:9.4f} {m / 1024:9.1f} {rt:>13} {rm:>12}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
