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
#   3. libFuzzer over every request message, bounded (FUZZ_SECONDS, 60),
#      with ASan + UBSan over the request-handling code it reaches.
# With --asan (or TILETUNE_ASAN=1) it then builds the asan preset (ASan +
# UBSan) and runs every test again under it, except the suites that only
# push every shipped GPU kernel through NVRTC/hipRTC (vendor compilers, not
# our memory handling). That doubles the run (about another hour on 2
# cores), which is why CI, bounded at 90 minutes, leaves it out.
# Each stage prints when it starts, so a slow stage shows in the CI log.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="$(nproc)"
asan="${TILETUNE_ASAN:-0}"
[[ ${1:-} == --asan ]] && asan=1
stage() { printf '== %s %s (%d s in)\n' "$(date +%T)" "$1" "$SECONDS"; }

stage "release build"
cmake --preset release
cmake --build --preset release -j"$jobs"
pg_env="$(bash tests/postgres-cluster.sh start)"
eval "$pg_env"
trap 'bash tests/postgres-cluster.sh stop "$TILETUNE_TEST_POSTGRES_DIR"' EXIT
stage "release tests"
ctest --preset release -j"$jobs"

stage "deploy lint and container smoke"
python3 .ci/lint-deploy.py build/release/bin/tiletuned
bash deploy/container-smoke.sh

stage "fuzz"
bash fuzz/run.sh "${FUZZ_SECONDS:-60}"

if [[ $asan == 1 ]]; then
  stage "asan build"
  cmake --preset asan
  cmake --build --preset asan -j"$jobs"
  stage "asan tests"
  ctest --preset asan -j"$jobs" -E '(GpuKernelsCompile|GemmCompile|TileOpsCompile)\.'
fi
stage "done"
