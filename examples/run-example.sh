#!/usr/bin/env bash
# Builds tiletune (release preset), starts tiletuned on embedded defaults with
# a throwaway data folder, runs examples/job.yaml end to end and prints the
# winners, then looks up the row ops and stops the daemon with SIGTERM.
#   examples/run-example.sh            build, start a daemon, run the example
#   examples/run-example.sh HOST:PORT  run it against a daemon already running
#                                      (with the CLI already built; a token
#                                      through TILETUNE_TOKEN_FILE if needed)
# Fails when neither the softmax nor the RMSNorm lookup is a HIT: tuning wins
# both against the single-threaded straightforward kernel on any CPU of two
# or more cores, but a busy machine's timing noise can keep one of them
# VENDOR (the daemon serves a kernel only past the noise it measured).
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
hits=0
for row_op in "softmax rows=512,cols=1000" "rmsnorm rows=512,cols=4096"; do
  read -r op shape <<<"$row_op"
  echo "== lookup of the $op"
  lookup=$("$bin/tiletune" lookup --op "$op" --dtype f32 --shape "$shape")
  echo "$lookup"
  [[ $lookup == HIT* ]] && hits=$((hits + 1))
done
((hits > 0)) || { echo "run-example: neither row op's lookup is a HIT" >&2; exit 1; }
echo "== records"
"$bin/tiletune" records list
