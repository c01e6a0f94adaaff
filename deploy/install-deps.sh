#!/usr/bin/env bash
# Installs every build and test dependency of tiletune from Debian 12 packages.
# Idempotent: README, .ci/run and the Dockerfiles all call this one script.
#   deploy/install-deps.sh                build + test dependencies
#   deploy/install-deps.sh --runtime      only what a running tiletuned needs
#   deploy/install-deps.sh --runtime-cpu  the same without the GPU runtimes
#                                         (the CPU image: they are most of it)
set -euo pipefail

runtime_packages=(
  ca-certificates
  libgrpc++1.51 libprotobuf32 libsqlite3-0 libspdlog1.10 libyaml-cpp0.7 libfmt9 libcpp-httplib0.11
  libpq5 # PostgreSQL client: --db postgresql://... (fleet mode)
  libsodium23 # ed25519 signatures of the kernels GetKernel serves
  g++ # the host backend compiles CPU kernel variants at run time
  libopenblas0 # the host GEMM baseline links it (absent is fine: host-naive then)
  tini # PID 1 in the containers: reaps the benchmark workers, forwards SIGTERM
)
# Opened at run time, absent is fine; with LLVM they weigh 250 MB.
gpu_runtime_packages=(
  libamdhip64-5 # HIP backend and hipRTC
  librocm-smi64-1 # AMD clocks, temperature, throttle state
  # HIP for gfx942/gfx950 (hipRTC 5.2 aborts on them): clang 22 from
  # bookworm-security with ROCm 5.2's device libraries (ClangHipCompiler)
  clang-22 lld-22 llvm-22 rocm-device-libs
)
build_packages=(
  build-essential cmake ninja-build pkg-config git
  libgrpc++-dev libgrpc-dev protobuf-compiler protobuf-compiler-grpc libprotobuf-dev
  libsqlite3-dev sqlite3 libspdlog-dev libfmt-dev libgtest-dev libgmock-dev
  libpq-dev libsodium-dev
  libopenblas-dev # OpenBLAS with its headers (cblas.h); the host backend needs only libopenblas0
  postgresql # the tests start a throwaway cluster (tests/postgres-cluster.sh)
  libcli11-dev nlohmann-json3-dev libyaml-cpp-dev libcpp-httplib-dev
  libamdhip64-dev
  librocm-smi-dev # rocm_smi.h: the build checks our ROCm SMI declarations against it
  clang-format
  openssl # the TLS tests make a throwaway CA and certificates
  clang libclang-rt-14-dev # libFuzzer target (fuzz/)
  python3-yaml # CI lint of the compose, Kubernetes and config YAML
  # The Python package and its pytest suite (client/python, tests/python)
  python3-grpcio python3-protobuf python3-numpy python3-pytest
  # The web view's browser test (tests/python/web_view_browser.py): headless
  # Chromium driven by selenium, the screenshot checked with Pillow
  chromium chromium-driver python3-selenium python3-pil
  python3-torch python3-matplotlib # tiletune.torch on CPU tensors; the example's plot
  # pip install client/python into a venv (tests/install)
  python3-venv python3-pip python3-setuptools python3-wheel
  # deploy/container-smoke.sh: the CPU image built and run with podman on runc
  # (not crun), on a base image made by debootstrap (no registry in CI)
  podman runc netavark iptables debootstrap
)

case "${1:-}" in
  --runtime-cpu) packages=("${runtime_packages[@]}") ;;
  --runtime) packages=("${runtime_packages[@]}" "${gpu_runtime_packages[@]}") ;;
  "") packages=("${runtime_packages[@]}" "${gpu_runtime_packages[@]}" "${build_packages[@]}") ;;
  *)
    echo "install-deps: unknown option $1 (--runtime, --runtime-cpu or none)" >&2
    exit 2
    ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

# Root (a fresh container has no sudo) installs directly; anyone else
# through sudo.
SUDO=""
if [[ $(id -u) -ne 0 ]]; then
  if ! command -v sudo >/dev/null; then
    echo "install-deps: needs root for ${missing[*]:-the gfx942/gfx950 device libraries};" \
      "run this as root or install sudo" >&2
    exit 1
  fi
  SUDO=sudo
fi
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
else
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
  echo "install-deps: installed ${#missing[@]} packages"
fi

# ROCm 5.2's device libraries have no ISA version constant for gfx942 and
# gfx950. Each is one constant in its own bitcode file; the data layout is
# clang's own for the target, so linking it gives no layout warning.
# ClangHipCompiler looks for them here.
if [[ " ${packages[*]} " == *" clang-22 "* ]]; then
  bitcode=/usr/local/lib/tiletune/amdgcn/bitcode
  $SUDO mkdir -p "$bitcode"
  layout=$(clang-22 -target amdgcn-amd-amdhsa -mcpu=gfx942 -x c /dev/null -S -emit-llvm -o - |
    grep '^target datalayout')
  for isa in 942:9402 950:9500; do
    printf '%s\ntarget triple = "amdgcn-amd-amdhsa"\n%s\n' "$layout" \
      "@__oclc_ISA_version = linkonce_odr protected local_unnamed_addr addrspace(4) constant i32 ${isa#*:}, align 4" |
      $SUDO llvm-as-22 - -o "$bitcode/oclc_isa_version_${isa%%:*}.bc"
  done
  echo "install-deps: gfx942/gfx950 ISA version constants in $bitcode"
fi
