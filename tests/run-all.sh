#!/usr/bin/env bash
# Builds every target (release preset, warnings as errors) and runs every
# test. This is what .ci/run and the README's test command call.
set -euo pipefail
cd "$(dirname "$0")/.."

cmake --preset release
cmake --build --preset release -j"$(nproc)"
ctest --preset release -j"$(nproc)"
