#!/usr/bin/env bash
# On the lent H200: tiletuned with the CUDA backend on a fresh data folder,
# then bench/gpu/gemm/served_vs_torch.py against it over the daemon's Unix
# socket (it submits the tuning job itself and times what the daemon serves
# against torch). Its table and JSON, the daemon's log and the tuned
# database go to OUT. The daemon serves its kernels even where its baseline
# does not stand for torch (serve_over_vendor_gap): torch is timed here.
#   source .gpu/env.sh; bash bench/gpu/served_vs_torch.sh PYTHON_DIR OUT [script args...]
# SERVED_SCRIPT picks another such script (default gemm/served_vs_torch.py),
# e.g. SERVED_SCRIPT=bench/gpu/attention/attention_vs_torch.py; its outputs
# are named after it.
set -uo pipefail
py=${1:?usage: served_vs_torch.sh PYTHON_DIR OUT [args...]}
out=${2:?usage: served_vs_torch.sh PYTHON_DIR OUT [args...]}
shift 2
data=$(mktemp -d /tmp/tt-served.XXXXXX)
mkdir -p "$out"
tiletuned --data-dir "$data" --backends cuda --listen 127.0.0.1:0 --listen-unix "$data/sock" \
  --metrics-listen 127.0.0.1:0 --ready-file "$data/ready" --compile-threads "$(nproc)" \
  --serve-over-vendor-gap \
  2>"$data/tiletuned.log" &
daemon=$!
trap 'kill -TERM $daemon 2>/dev/null; wait $daemon' EXIT
for _ in $(seq 600); do [[ -f $data/ready ]] && break; sleep 0.1; done
key=$(sed -n 's/^signing_key=//p' "$data/ready")
script=${SERVED_SCRIPT:-$(dirname "$0")/gemm/served_vs_torch.py}
name=$(basename "$script" .py | tr _ -)
PYTHONPATH=$py python3 "$script" --server "unix:$data/sock" \
  --trusted-key "$key" --json "$out/$name.json" "$@" 2>&1 | tee "$out/$name.txt"
status=${PIPESTATUS[0]}
kill -TERM $daemon
wait $daemon
trap - EXIT
cp "$data/tiletune.db" "$out/tiletune.db"
tail -n 300 "$data/tiletuned.log" >"$out/tiletuned.log"
exit "$status"
