#!/usr/bin/env bash
# Builds tiletune (release preset), starts tiletuned on embedded defaults with
# a throwaway data folder, runs examples/job.yaml end to end and prints the
# winners, then shows a Lookup HIT and stops the daemon with SIGTERM.
set -euo pipefail
cd "$(dirname "$0")/.."

cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)"
bin=build/release/bin

data=$(mktemp -d /tmp/tiletune-example.XXXXXX)
trap 'kill -TERM "$daemon" 2>/dev/null; wait "$daemon" 2>/dev/null; rm -rf "$data"' EXIT
"$bin/tiletuned" --data-dir "$data" --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 \
  --ready-file "$data/ready" 2>"$data/tiletuned.log" &
daemon=$!
for _ in $(seq 100); do [[ -f "$data/ready" ]] && break; sleep 0.1; done
[[ -f "$data/ready" ]] || { cat "$data/tiletuned.log"; exit 1; }
server=$(sed -n 's/^grpc=//p' "$data/ready")
metrics=$(sed -n 's/^metrics=//p' "$data/ready")
export TILETUNE_SERVER=$server

echo "== tiletuned on $server (metrics http://$metrics/metrics, log $data/tiletuned.log)"
"$bin/tiletune" devices
echo "== tuning examples/job.yaml"
"$bin/tiletune" submit examples/job.yaml --watch
echo "== lookup of the first kernel"
"$bin/tiletune" lookup --op gemm --dtype f32 --shape m=256,n=384,k=256 --chain bias,gelu_tanh
echo "== records"
"$bin/tiletune" records list
