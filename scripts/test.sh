#!/usr/bin/env bash
# Build blkc and run the whole test suite (ctest runs the Criterion suites).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
ctest --test-dir build --output-on-failure
