#!/usr/bin/env bash
# Installs what colmatch needs from Debian 12 packages, and nothing that is already there.
# Idempotent: a second run does no apt work. Runs as root (or with sudo when available).
set -euo pipefail
# python3-matplotlib draws `colmatch report`; chromium, chromium-driver and python3-selenium open its
# page in a real browser in the tests. python3-distributed (Dask) runs `colmatch sweep`.
# clang and its runtime libraries build the ASan/UBSan suite and the libFuzzer targets (preset sanitize).
pkgs=(build-essential cmake pkg-config clang libclang-rt-14-dev
      libtbb-dev libxsimd-dev libroaring-dev libsimdjson-dev libtomlplusplus-dev
      libcli11-dev libfmt-dev zlib1g-dev libzstd-dev zstd libexpat1-dev libgtest-dev libgmock-dev libbenchmark-dev
      pybind11-dev python3-dev python3-numpy python3-pandas python3-pytest
      python3-matplotlib chromium chromium-driver python3-selenium python3-distributed python3-dask)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "setup: installing ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
