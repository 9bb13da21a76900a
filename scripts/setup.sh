#!/usr/bin/env bash
# Installs the Debian packages blkc needs to build and test; idempotent:
# installs only what is missing. Run as root (or with sudo available).
# chromium: the test of blkc --explore's pages in a browser (tests/explore/).
set -euo pipefail
packages=(cmake ninja-build re2c llvm-19-dev libpolly-19-dev libzstd-dev zlib1g-dev libcriterion-dev
          clang-19 libclang-rt-19-dev pkg-config python3 python3-numpy
          python3-pip python3-venv chromium)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages present"; exit 0
fi
echo "setup: installing ${missing[*]}"
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
