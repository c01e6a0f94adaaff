#!/usr/bin/env bash
# Builds tiletune (release preset), starts tiletuned on embedded defaults with
# a throwaway data folder, runs examples/job.yaml end to end and prints the
# winners, then shows a Lookup HIT and stops the daemon with SIGTERM.
#   examples/run-example.sh            build, start a daemon, run the example
#   examples/run-example.sh HOST:PORT  run it against a daemon already running
#                                      (with the CLI already built; a token
#                                      through TILETUNE_TOKEN_FILE if needed)
# Fails when the lookup of the softmax (which tuning wins against the
# single-threaded straightforward kernel on any CPU of two or more cores) is
# not a HIT.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/release/bin

if [[ $# -gt 0 ]]; then
  export TILETUNE_SERVER=$1
  echo "== tiletuned on $TILETUNE_SERVER"
else
  cmake --preset release >/dev/null
  cmake --build --preset release -j"$(nproc)"
  data=$(mktemp -d /tmp/tiletune-example.XXXXXX)
  trap 'kill -TERM "$daemon" 2>/dev/null; wait "$daemon" 2>/dev/null; rm -rf "$data"' EXIT
  "$bin/tiletuned" --data-dir "$data" --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 \
    --ready-file "$data/ready" 2>"$data/tiletuned.log" &
  daemon=$!
  for _ in $(seq 100); do [[ -f "$data/ready" ]] && break; sleep 0.1; done
  [[ -f "$data/ready" ]] || { cat "$data/tiletuned.log"; exit 1; }
  metrics=$(sed -n 's/^metrics=//p' "$data/ready")
  server=$(sed -n 's/^grpc=//p' "$data/ready")
  export TILETUNE_SERVER=$server
  echo "== tiletuned on $TILETUNE_SERVER (metrics http://$metrics/metrics, log $data/tiletuned.log)"
fi

"$bin/tiletune" devices
echo "== tuning examples/job.yaml"
"$bin/tiletune" submit examples/job.yaml --watch
echo "== lookup of the softmax"
lookup=$("$bin/tiletune" lookup --op softmax --dtype f32 --shape rows=512,cols=1000)
echo "$lookup"
[[ $lookup == HIT* ]] || { echo "run-example: the lookup is not a HIT" >&2; exit 1; }
echo "== records"
"$bin/tiletune" records list
