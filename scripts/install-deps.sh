#!/usr/bin/env bash
# Installs every package depscan needs to build, test and benchmark, from Debian (qemu-user: the
# tests run the real loader on emulated older CPUs; musl-tools: musl's loader and compiler, which
# the musl fixtures are built with and compared against; bsdutils: script(1), the pseudo-terminal
# the colour test runs depscan on; libc6-i386: the i386 loader of /lib32 a 32-bit fixture runs under;
# lld: a fixture whose dynamic section is in the order lld writes it).
# Idempotent: packages already present are skipped by apt.
set -euo pipefail
packages=(
  build-essential cmake pkg-config
  liblief-dev libcli11-dev libfmt-dev doctest-dev nlohmann-json3-dev
  libarchive-dev libzstd-dev zstd zip unzip
  gcc-mingw-w64-x86-64 binutils-mingw-w64-x86-64 gcc-mingw-w64-i686 binutils-mingw-w64-i686
  patchelf libtree pax-utils python3-pyelftools python3-pip hyperfine time xxd bsdutils
  qemu-user musl-tools libc6-i386 lib32stdc++6
  clang libclang-rt-14-dev lld
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null
fi
