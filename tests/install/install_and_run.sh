#!/usr/bin/env bash
# Install.OutsideProjectAndPipPackageRunAgainstTheDaemon:
#   install_and_run.sh BUILD_DIR SOURCE_DIR
# 1. cmake --install of BUILD_DIR into a throwaway prefix;
# 2. examples/cpp-client built against it with find_package(tiletune), and
#    one file each built with `pkg-config --cflags --libs tiletune` and
#    `... tiletune-launcher` (all with CXXFLAGS and LDFLAGS from the
#    environment);
# 3. the installed tiletuned (host backend) started, a small GEMM tuned with
#    the installed CLI (which needs the installed benchmark worker), and the
#    outside program run against it: ListDevices, a Lookup MISS with its
#    fallback, and the tuned GEMM launched through the installed launcher and
#    checked against float64;
# 4. the Python package pip-installed into a venv and run against the daemon.
# Any failing step fails the test; the daemon is stopped on every exit.
set -euo pipefail
build=$(realpath "$1")
source=$(realpath "$2")
here=$(dirname "$(realpath "$0")")
# Only what gets installed may be imported.
unset PYTHONPATH

work=$(mktemp -d /tmp/tiletune-install-test.XXXXXX)
daemon=""
cleanup() {
  if [[ -n "$daemon" ]]; then
    kill -TERM "$daemon" 2>/dev/null || true
    wait "$daemon" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
prefix=$work/prefix
# A step's output is shown only when it fails.
run() {
  local log=$work/step.log
  "$@" >"$log" 2>&1 || { cat "$log"; echo "FAILED: $*"; exit 1; }
}

echo "== cmake --install into $prefix"
run cmake --install "$build" --prefix "$prefix"
for installed in bin/tiletuned bin/tiletune bin/tiletune-worker bin/tiletune-rtc; do
  [[ -x "$prefix/$installed" ]] || { echo "not installed: $installed"; exit 1; }
done
[[ -f "$prefix/share/tiletune/proto/tiletune/v1/tiletune.proto" ]] || {
  echo "not installed: share/tiletune/proto"
  exit 1
}

echo "== examples/cpp-client with find_package(tiletune CONFIG)"
run cmake -S "$source/examples/cpp-client" -B "$work/cpp-client" -DCMAKE_PREFIX_PATH="$prefix"
run cmake --build "$work/cpp-client"

echo "== pkg-config --cflags --libs tiletune, then tiletune-launcher"
pc_dir=$(dirname "$(find "$prefix" -name tiletune.pc)")
read -ra pc_flags <<<"$(PKG_CONFIG_PATH=$pc_dir pkg-config --cflags --libs tiletune)"
read -ra cxx_flags <<<"${CXXFLAGS:-} ${LDFLAGS:-}"
run c++ -std=c++20 "${cxx_flags[@]}" "$here/pkg_config_client.cpp" -o "$work/pkg-config-client" \
  "${pc_flags[@]}"
run "$work/pkg-config-client"
read -ra pc_flags <<<"$(PKG_CONFIG_PATH=$pc_dir pkg-config --cflags --libs tiletune-launcher)"
run c++ -std=c++20 "${cxx_flags[@]}" "$here/pkg_config_launcher.cpp" -o "$work/pkg-config-launcher" \
  "${pc_flags[@]}"
run "$work/pkg-config-launcher"

echo "== installed tiletuned (host backend)"
data=$work/data
mkdir "$data"
"$prefix/bin/tiletuned" --data-dir "$data" --backends host --listen 127.0.0.1:0 \
  --metrics-listen 127.0.0.1:0 --ready-file "$data/ready" --host-cpus 1 \
  --host-openblas-baseline false >"$work/tiletuned.log" 2>&1 &
daemon=$!
for _ in $(seq 3000); do  # 300 s: only a hang takes this long, even on a loaded machine
  [[ -f "$data/ready" ]] && break
  kill -0 "$daemon" 2>/dev/null || break
  sleep 0.1
done
[[ -f "$data/ready" ]] || { cat "$work/tiletuned.log"; echo "FAILED: tiletuned not ready"; exit 1; }
address=$(sed -n 's/^grpc=//p' "$data/ready")
signing_key=$(sed -n 's/^signing_key=//p' "$data/ready")
[[ -n "$signing_key" ]] || { cat "$data/ready"; echo "FAILED: no signing_key= in the ready file"; exit 1; }

echo "== the example's GEMM tuned with the installed CLI (runs the installed worker)"
# The example launches this key: a decode GEMM, where host_gemm_rowwise beats
# host-naive, the baseline here, and seed 21 tries it first (kDecodeGemmSeed,
# tests/support/tiletuned_process.h): the record is TUNED, so a kernel is
# served.
cat >"$work/job.yaml" <<'JOB'
name: install-test
strategy: random
seed: 21
device: cpu:0
budget: {max_variants: 4}
kernels:
  - {op: gemm, dtype: f32, shape: {m: 1, n: 512, k: 512}, chain: [bias, relu]}
JOB
if ! "$prefix/bin/tiletune" --server "$address" submit "$work/job.yaml" --watch >"$work/job.log" 2>&1; then
  cat "$work/job.log" "$work/tiletuned.log"
  echo "FAILED: tuning job"
  exit 1
fi
grep -q 'item 0 succeeded: winner tuned' "$work/job.log" || {
  cat "$work/job.log"
  echo "FAILED: the tuned variant did not win"
  exit 1
}

echo "== outside program against $address"
answer=$("$work/cpp-client/tiletune-client-example" "$address" "$signing_key") || {
  echo "$answer"
  echo "FAILED: tiletune-client-example"
  exit 1
}
echo "$answer"
grep -q '^device cpu:0 backend=host$' <<<"$answer" || { echo "FAILED: no host device"; exit 1; }
grep -q '^lookup gemm .*: RESULT_MISS fallback=[^ ]' <<<"$answer" || {
  echo "FAILED: no MISS with a fallback"
  exit 1
}
grep -q '^launch gemm .*: tuned (' <<<"$answer" || {
  echo "FAILED: the launcher did not run the tuned kernel"
  exit 1
}

echo "== pip install client/python into a venv, then the Python client"
# A copy of the two folders the build reads, so that setuptools' build/ and
# egg-info land in the throwaway folder, not in the source tree.
mkdir -p "$work/src/client"
cp -r "$source/proto" "$work/src/proto"
cp -r "$source/client/python" "$work/src/client/python"
rm -rf "$work/src/client/python/build" "$work/src/client/python/"*.egg-info
# Debian's python3 (python3-grpcio, python3-protobuf, python3-numpy).
run /usr/bin/python3 -m venv --system-site-packages "$work/venv"
run "$work/venv/bin/pip" install --no-build-isolation --no-index "$work/src/client/python"
"$work/venv/bin/python" "$here/check_python_package.py" "$address"

kill -TERM "$daemon"
wait "$daemon" || { cat "$work/tiletuned.log"; echo "FAILED: tiletuned did not stop cleanly"; exit 1; }
daemon=""
echo "== passed"
