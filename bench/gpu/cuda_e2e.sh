#!/usr/bin/env bash
# Issue 3 proof on a CUDA machine: tiletuned with the CUDA backend tunes a job
# submitted through the CLI end to end (compile, validate, time, store,
# Lookup HIT), then a second daemon with planted faults isolates a hanging
# and an illegal-address kernel and keeps serving. Everything it prints and
# the daemons' logs go to OUT.
#   source .gpu/env.sh; bash bench/gpu/cuda_e2e.sh OUT
set -uo pipefail
out=${1:?usage: cuda_e2e.sh OUT}
mkdir -p "$out"
jobs=$(dirname "$0")/jobs
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
  --format=csv >"$out/gpu.csv" 2>&1

start_daemon() {  # data_dir extra-args...
  local data=$1
  shift
  mkdir -p "$data"
  tiletuned --data-dir "$data" --backends cuda,host --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 \
    --ready-file "$data/ready" "$@" 2>"$data/tiletuned.log" &
  daemon=$!
  for _ in $(seq 300); do [[ -f $data/ready ]] && break; sleep 0.1; done
  export TILETUNE_SERVER=$(sed -n 's/^grpc=//p' "$data/ready")
  metrics=$(sed -n 's/^metrics=//p' "$data/ready")
}

stop_daemon() {  # data_dir name
  curl -s "http://$metrics/metrics" >"$out/$2-metrics.txt"
  kill -TERM "$daemon"
  wait "$daemon"
  echo "tiletuned exit: $?" >>"$1/tiletuned.log"
  cp "$1/tiletuned.log" "$out/$2-tiletuned.log"
}

data=/tmp/tt-e2e
start_daemon $data
tiletune devices | tee "$out/e2e-devices.txt"
time tiletune submit "$jobs/cuda-e2e.yaml" --watch >"$out/e2e-submit.txt" 2>"$out/e2e-watch.txt"
echo "submit exit: $?" >>"$out/e2e-submit.txt"
cat "$out/e2e-submit.txt"
tiletune lookup --op softmax --dtype f32 --shape rows=16384,cols=4096 --device cuda:0 |
  tee "$out/e2e-lookup.txt"
tiletune --json records list >"$out/e2e-records.json"
stop_daemon $data e2e

data=/tmp/tt-faults
start_daemon $data --plant-faults true --run-limit-min-seconds 2 --run-limit-max-seconds 5
tiletune submit "$jobs/cuda-faults.yaml" --watch >"$out/faults-submit.txt" 2>"$out/faults-watch.txt"
echo "submit exit: $?" >>"$out/faults-submit.txt"
cat "$out/faults-submit.txt"
tiletune devices | tee "$out/faults-devices.txt"
tiletune health | tee "$out/faults-health.txt"
stop_daemon $data faults
cp $data/tiletune.db "$out/faults.db"
cp /tmp/tt-e2e/tiletune.db "$out/e2e.db"
