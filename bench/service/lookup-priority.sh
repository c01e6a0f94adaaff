#!/bin/bash
# Lookups on LookupStream (16 clients, one lookup in flight each), idle and
# while a host job tunes, under each tuning_sched_policy (other, batch, idle)
# alternated in the same run, over TCP and the Unix socket. Each daemon
# serves a copy of one data folder (the records of
# bench/service/jobs/lookup-records.yaml, tuned once). Rows go to
# OUT/rows.json (one JSON object a line) and a table to stdout.
#   bench/service/lookup-priority.sh BIN OUT [ROUNDS]
# BIN: the folder with tiletuned, tiletune and tiletune-bench-lookup.
# NICE=-20 runs daemons and bench at that niceness (root only): on a machine
# that other work keeps busy, they then take what they need first, as on a
# quiet one; the tuning job's children keep their offsets from the daemon.
set -euo pipefail
BIN=$1 OUT=$2 ROUNDS=${3:-3}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
NICE=${NICE:-0}
mkdir -p "$OUT"
: > "$OUT/rows.json"
WORK=$(mktemp -d /tmp/tiletune-lookup-priority.XXXXXX)
trap 'kill $(cat "$WORK"/*/pid 2>/dev/null) 2>/dev/null || true; rm -rf "$WORK"' EXIT

start() {  # BIN DIR [flags...]: a daemon on DIR, its pid in DIR/pid
  local bin=$1 dir=$2
  shift 2
  nice -n "$NICE" "$bin/tiletuned" --listen 127.0.0.1:0 --listen-unix "$dir/s.sock" \
    --data-dir "$dir" --backends host --metrics-listen "" --ready-file "$dir/ready" "$@" \
    > "$dir/log" 2>&1 &
  echo $! > "$dir/pid"
  for _ in $(seq 600); do [ -f "$dir/ready" ] && return; sleep 0.1; done
  echo "daemon on $dir did not start" >&2
  cat "$dir/log" >&2
  exit 1
}
stop() {  # DIR
  kill "$(cat "$1/pid")"
  while kill -0 "$(cat "$1/pid")" 2>/dev/null; do sleep 0.1; done
  rm -f "$1/ready"
}

mkdir "$WORK/records"
start "$BIN" "$WORK/records"
"$BIN/tiletune" --server "$(sed -n 's/^grpc=//p' "$WORK/records/ready")" submit \
  "$REPO/bench/service/jobs/lookup-records.yaml" --watch > "$WORK/records/tuned.txt" 2>&1
stop "$WORK/records"

for round in $(seq "$ROUNDS"); do
  for variant in other batch idle; do
    dir="$WORK/$variant"
    rm -rf "$dir"
    cp -r "$WORK/records" "$dir"
    rm -f "$dir/s.sock"
    start "$BIN" "$dir" --tuning-sched-policy "$variant"
    for transport in tcp unix; do
      address=$(sed -n 's/^grpc=//p' "$dir/ready")
      [ "$transport" = unix ] && address="unix:$dir/s.sock"
      load=$(cut -d' ' -f1 /proc/loadavg)
      row=$(nice -n "$NICE" "$BIN/tiletune-bench-lookup" --server "$address" --clients 16 \
        --seconds 5 --stream --json --while-tuning "$REPO/bench/service/jobs/tuning-load.yaml")
      python3 -c '
import json, sys
row = json.loads(sys.argv[1])
row.update(round=int(sys.argv[2]), variant=sys.argv[3], transport=sys.argv[4],
           load_average=float(sys.argv[5]))
print(json.dumps(row))
i, t = row["idle"], row["while_tuning"]
print("%d %-9s %-4s load %5.2f | idle %6.0f/s p99 %6.3f ms | tuning %6.0f/s p99 %6.3f ms ran=%s errors=%d/%d"
      % (row["round"], row["variant"], row["transport"], row["load_average"],
         i["lookups_per_second"], i["latency_ms"]["p99"], t["lookups_per_second"],
         t["latency_ms"]["p99"], t["job_ran_throughout"], i["errors"], t["errors"]),
      file=sys.stderr)' "$row" "$round" "$variant" "$transport" "$load" >> "$OUT/rows.json"
    done
    stop "$dir"
  done
done 2>&1
