#!/usr/bin/env bash
# Build blkc and run the whole test suite (ctest runs the Criterion suites).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
# setup.sh installed Chromium: the page test must run, not skip
BLK_REQUIRE_BROWSER=1 ctest --test-dir build --output-on-failure
