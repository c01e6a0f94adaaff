#!/usr/bin/env bash
# On the lent H200: tiletuned with the CUDA backend on a fresh data folder,
# then the Llama-3-8B decoder layer example against it over the daemon's
# Unix socket (it submits the tuning job itself). Its table, JSON and plot,
# the daemon's log and the tuned database go to OUT.
#   source .gpu/env.sh; bash bench/gpu/llama_layer.sh PYTHON_DIR OUT [example args...]
# PYTHON_DIR holds the built package (build/release/python); SEED_DB: a
# tiletune.db to start from (a database an earlier run brought back).
set -uo pipefail
py=${1:?usage: llama_layer.sh PYTHON_DIR OUT [args...]}
out=${2:?usage: llama_layer.sh PYTHON_DIR OUT [args...]}
shift 2
data=$(mktemp -d /tmp/tt-llama.XXXXXX)
mkdir -p "$out"
[[ -n ${SEED_DB:-} ]] && cp "$SEED_DB" "$data/tiletune.db"
tiletuned --data-dir "$data" --backends cuda --listen 127.0.0.1:0 --listen-unix "$data/sock" \
  --metrics-listen 127.0.0.1:0 --ready-file "$data/ready" --compile-threads "$(nproc)" \
  2>"$data/tiletuned.log" &
daemon=$!
trap 'kill -TERM $daemon 2>/dev/null; wait $daemon' EXIT
for _ in $(seq 600); do [[ -f $data/ready ]] && break; sleep 0.1; done
key=$(sed -n 's/^signing_key=//p' "$data/ready")
PYTHONPATH=$py python3 "$(dirname "$0")/../../examples/pytorch/llama_decoder_layer.py" \
  --daemon "unix:$data/sock" --trusted-key "$key" --json "$out/llama-layer.json" \
  --plot "$out/llama-layer.png" "$@" 2>&1 | tee "$out/llama-layer.txt"
status=${PIPESTATUS[0]}
kill -TERM $daemon
wait $daemon
trap - EXIT
cp "$data/tiletune.db" "$out/tiletune.db"
tail -n 300 "$data/tiletuned.log" >"$out/tiletuned.log"
exit "$status"
