#!/usr/bin/env bash
# Every test, in the order CI wants to fail fast (this is what .ci/run and
# the README's test command call):
#   1. release preset (warnings as errors): build everything, run every test,
#      the PostgreSQL ones on a throwaway cluster (tests/postgres-cluster.sh)
#      that lives until this script ends, however it ends;
#   2. deploy/ lint: manifests, Dockerfiles, config against the built daemon;
#      then the CPU image, built with podman from the binaries of step 1, run
#      through the example job and stopped with SIGTERM
#      (deploy/container-smoke.sh, as root);
#   3. libFuzzer over every request message, bounded (FUZZ_SECONDS, 60);
#   4. asan preset (ASan + UBSan): build and run the tests, except the suites
#      that only push every shipped GPU kernel through NVRTC/hipRTC (they
#      exercise vendor compilers, not our memory handling, and take most of
#      the time under ASan).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="$(nproc)"

cmake --preset release
cmake --build --preset release -j"$jobs"
pg_env="$(bash tests/postgres-cluster.sh start)"
eval "$pg_env"
trap 'bash tests/postgres-cluster.sh stop "$TILETUNE_TEST_POSTGRES_DIR"' EXIT
ctest --preset release -j"$jobs"

python3 .ci/lint-deploy.py build/release/bin/tiletuned
bash deploy/container-smoke.sh

bash fuzz/run.sh "${FUZZ_SECONDS:-60}"

cmake --preset asan
cmake --build --preset asan -j"$jobs"
ctest --preset asan -j"$jobs" -E '(GpuKernelsCompile|GemmCompile|TileOpsCompile)\.'
