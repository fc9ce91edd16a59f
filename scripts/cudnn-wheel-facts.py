#!/usr/bin/env python3
"""Prints what matrix/data/cudnn.json records for cuDNN releases, read from NVIDIA's wheels on PyPI.

For each release and CUDA major (nvidia-cudnn-cu11, -cu12, -cu13), it reads only the members
it needs from the Linux x86_64 wheel with HTTP range requests (the headers, libcudnn.so.9 and
libcudnn_graph.so.9, about 50 MB of a 600 MB wheel), then loads that libcudnn.so.9 in a child
Python and asks cuDNN itself: cudnnGetVersion, cudnnGetCudartVersion (the CUDA version the build
was made with) and cudnnGetMaxDeviceVersion; these need no GPU or driver. It also lists the wheel's
shared libraries (the sub-libraries of that release).

    python3 scripts/cudnn-wheel-facts.py 9.20.0 9.21.1 ...

A maintenance tool for the matrix data; the tests never run it (it downloads).
"""
import io
import json
import re
import subprocess
import sys
import tempfile
import urllib.request
import zipfile
from pathlib import Path

SIMPLE_INDEX = "https://pypi.org/simple/{}/"
MEMBERS = ("include/cudnn_version_v9.h", "include/cudnn_version.h", "lib/libcudnn.so.9", "lib/libcudnn_graph.so.9")


class HttpRangeFile(io.RawIOBase):
    """A read-only, seekable view of a remote file that fetches only the byte ranges read."""

    def __init__(self, url, size):
        self.url, self.size, self.pos = url, size, 0

    def seekable(self):
        return True

    def readable(self):
        return True

    def tell(self):
        return self.pos

    def seek(self, offset, whence=io.SEEK_SET):
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.pos, io.SEEK_END: self.size}[whence]
        self.pos = base + offset
        return self.pos

    def readinto(self, buffer):
        length = min(len(buffer), self.size - self.pos)
        if length <= 0:
            return 0
        request = urllib.request.Request(self.url, headers={"Range": f"bytes={self.pos}-{self.pos + length - 1}"})
        with urllib.request.urlopen(request, timeout=120) as response:
            data = response.read()
        if response.status != 206 or len(data) != length:
            raise OSError(f"{self.url}: range request answered {response.status} with {len(data)} bytes")
        buffer[:length] = data
        self.pos += length
        return length


def wheel_file(project, release):
    request = urllib.request.Request(SIMPLE_INDEX.format(project),
                                     headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        files = json.load(response)["files"]
    pattern = re.compile(rf"{project.replace('-', '_')}-{re.escape(release)}(\.\d+)?-py3-none-manylinux\w*_x86_64\.whl$")
    for entry in files:
        if pattern.match(entry["filename"]):
            return entry
    return None


def extract_members(entry, into):
    """Writes the MEMBERS into `into`; returns the names of the wheel's shared libraries."""
    remote = io.BufferedReader(HttpRangeFile(entry["url"], entry["size"]), buffer_size=1 << 20)
    with zipfile.ZipFile(remote) as wheel:
        for info in wheel.infolist():
            if info.filename.endswith(MEMBERS):
                target = into / Path(info.filename).name
                target.write_bytes(wheel.read(info))
        return sorted(Path(name).name for name in wheel.namelist() if re.search(r"/lib/[^/]+\.so[.\d]*$", name))


def header_facts(directory):
    header = directory / "cudnn_version_v9.h"
    if not header.exists():
        header = directory / "cudnn_version.h"
    text = header.read_text()
    number = lambda name: int(re.search(rf"#define {name} (\d+)", text).group(1))
    return {"header": f"{number('CUDNN_MAJOR')}.{number('CUDNN_MINOR')}.{number('CUDNN_PATCHLEVEL')}",
            "max_sm": f"{number('CUDNN_MAX_SM_MAJOR_NUMBER')}.{number('CUDNN_MAX_SM_MINOR_NUMBER')}"}


CUDNN_QUERY = """
import ctypes, json, sys
cudnn = ctypes.CDLL(sys.argv[1])
for name in ("cudnnGetVersion", "cudnnGetCudartVersion", "cudnnGetMaxDeviceVersion"):
    getattr(cudnn, name).restype = ctypes.c_size_t
print(json.dumps({"version": cudnn.cudnnGetVersion(), "cudart": cudnn.cudnnGetCudartVersion(),
                  "max_device": cudnn.cudnnGetMaxDeviceVersion()}))
"""


def runtime_facts(directory):
    # libcudnn.so.9 finds libcudnn_graph.so.9 beside it through its RUNPATH ($ORIGIN).
    result = subprocess.run([sys.executable, "-c", CUDNN_QUERY, str(directory / "libcudnn.so.9")],
                            capture_output=True, text=True, timeout=120, env={"LD_LIBRARY_PATH": ""})
    if result.returncode != 0:
        return {"error": result.stderr.strip().splitlines()[-1:]}
    return json.loads(result.stdout)


def facts(project, release):
    entry = wheel_file(project, release)
    if entry is None:
        return {"wheel": None}
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        libraries = extract_members(entry, directory)
        return {"wheel": entry["filename"], **header_facts(directory), **runtime_facts(directory),
                "libraries": libraries}


def main(releases):
    for release in releases:
        for project in ("nvidia-cudnn-cu11", "nvidia-cudnn-cu12", "nvidia-cudnn-cu13"):
            print(json.dumps({"release": release, "project": project, **facts(project, release)}), flush=True)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
