#!/usr/bin/env bash
# On the lent H200: every GPU test binary, then the GEMM and memory-bound
# benchmarks, from binaries bundled here with ../shared/gpu/bundle.sh
# (their build-tree paths are recreated as links to the bundle). Logs and
# JSON go to OUT; a table of pass counts is printed last.
#   source .gpu/env.sh; bash bench/gpu/run_gpu_suites.sh BUILD_DIR OUT [bench-gemm args...]
# FUSION_ARGS: arguments for tiletune-bench-fusion (e.g. --case softmax);
# SKIP_BENCH=1: the tests only.
# BUILD_DIR is the build tree the test binaries were compiled in
# (TILETUNE_BUILD_DIR, e.g. /work/main/build/release).
set -uo pipefail
build=${1:?usage: run_gpu_suites.sh BUILD_DIR OUT}
out=${2:?usage: run_gpu_suites.sh BUILD_DIR OUT}
shift 2
mkdir -p "$out" "$build"
here=$(cd "$(dirname "$(command -v tiletuned)")" && pwd)
[[ -e $build/bin ]] || ln -s "$here" "$build/bin"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv \
  >"$out/gpu.csv" 2>&1
summary=""
for t in test_kernels_tile_gpu test_kernels_tile_compile test_tuner_gpu_rows test_tuner_vendor_baseline \
  test_launcher \
  test_runtime_cuda; do
  "$here/$t" --gtest_brief=1 >"$out/tests-$t.txt" 2>&1
  summary+="$t: $(grep -E '^\[  (PASSED|FAILED)  \]' "$out/tests-$t.txt" | tr '\n' ' ')"$'\n'
  # One log for all: the device tool brings back at most eight files.
  { echo "== $t"; cat "$out/tests-$t.txt"; } >>"$out/tests.log" && rm "$out/tests-$t.txt"
done
if [[ ${SKIP_BENCH:-0} != 1 ]]; then
  tiletune-bench-gemm --threads "$(nproc)" --json "$out/gemm.json" "$@" >"$out/bench-gemm.txt" 2>&1
  # shellcheck disable=SC2086 # FUSION_ARGS is a list of arguments
  tiletune-bench-fusion --threads "$(nproc)" --json "$out/fusion.json" ${FUSION_ARGS:-} \
    >"$out/bench-fusion.txt" 2>&1
fi
echo "$summary"
