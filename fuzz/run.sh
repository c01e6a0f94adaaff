#!/usr/bin/env bash
# Builds the libFuzzer target over every TuningService request (clang, with
# ASan + UBSan and every library instrumented for coverage) in build/fuzz and
# runs it for a bounded time from the seeds in fuzz/seeds.
#   fuzz/run.sh [SECONDS]       default 60; CI runs this
# A finding leaves crash-* / leak-* / timeout-* files in build/fuzz/findings
# and exits non-zero; replay one with
#   build/fuzz/bin/tiletune-fuzz-requests build/fuzz/findings/crash-...
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
build=build/fuzz
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi

# Warnings are not fatal here: clang's set differs from GCC's, and the
# release build (GCC, -Werror) is the warnings gate.
cmake -S . -B "$build" -G Ninja "${launcher[@]}" \
  -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DTILETUNE_WERROR=OFF -DTILETUNE_BUILD_TESTS=OFF -DTILETUNE_BUILD_BENCH=OFF \
  -DTILETUNE_BUILD_FUZZ=ON >/dev/null
cmake --build "$build" --target tiletune-fuzz-requests

# Seeds are text protos (readable, reviewable); the target reads a selector
# byte (the file name's number) and then the message's wire bytes.
corpus="$build/corpus"
findings="$build/findings"
rm -rf "$findings"
mkdir -p "$corpus" "$findings"
declare -A messages=(
  [00]=LookupRequest [01]=BatchLookupRequest [02]=SubmitJobRequest [03]=ImportRecordsRequest
  [04]=ListJobsRequest [05]=ListRecordsRequest [06]=ExportRecordsRequest [07]=GetJobRequest
  [08]=CancelJobRequest [09]=WatchJobRequest [10]=ListDevicesRequest [11]=ListTrialsRequest)
for seed in fuzz/seeds/*.txtpb; do
  name=$(basename "$seed" .txtpb)
  selector=${name%%-*}
  {
    printf "\\x$(printf %02x "$((10#$selector))")"
    protoc -I proto --encode="tiletune.v1.${messages[$selector]}" tiletune/v1/tiletune.proto <"$seed"
  } >"$corpus/seed-$name"
done

ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  "$build/bin/tiletune-fuzz-requests" "$corpus" \
  -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=4096 \
  -artifact_prefix="$findings/" -print_final_stats=1
