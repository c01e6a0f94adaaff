#!/bin/bash
# tiletune-bench-lookup on a GPU machine with daemon and bench pinned to two
# cores (taskset -c 0,1), host and CUDA backends, Lookup and LookupStream over
# TCP and the Unix socket, idle and while a job tunes. Run from the repository
# root with the bundle of ../shared/gpu/bundle.sh in .gpu/; JSON goes to $OUT.
source .gpu/env.sh
B=.gpu/bin/tiletune-bench-lookup
run() {  # backend tag jobfile
  d=/tmp/lk-$2; rm -rf $d; mkdir -p $d
  taskset -c 0,1 .gpu/bin/tiletuned --listen 127.0.0.1:$3 --listen-unix $d/s.sock --data-dir $d --backends $1 > $d/log 2>&1 &
  sleep 3
  timeout 240 taskset -c 0,1 .gpu/bin/tiletune --server 127.0.0.1:$3 submit $4 --watch > $d/records.txt 2>&1; tail -3 $d/records.txt
  for a in 127.0.0.1:$3 unix:$d/s.sock; do for m in "" "--stream"; do
    timeout 120 taskset -c 0,1 $B --server $a --clients 16 --seconds 5 $m --json --while-tuning $5 > $OUT/$2-$(echo $a | tr -c 'a-z0-9' '_')${m:+stream}.json
    python3 -c "
import json,sys; d=json.load(open(sys.argv[1])); i,t=d['idle'],d['while_tuning']
print(sys.argv[2], i['server'], i['api'], i['key_source'], 'idle %.0f/s p99 %.3f | tuning %.0f/s p99 %.3f ran=%s err=%d/%d' % (i['lookups_per_second'], i['latency_ms']['p99'], t['lookups_per_second'], t['latency_ms']['p99'], t['job_ran_throughout'], i['errors'], t['errors']))" $OUT/$2-$(echo $a | tr -c 'a-z0-9' '_')${m:+stream}.json $2
  done; done
  pkill -f "listen 127.0.0.1:$3"; sleep 2
}
lscpu | grep "Model name"
run host host 7801 bench/service/jobs/lookup-records.yaml bench/service/jobs/tuning-load.yaml
run cuda cuda 7802 bench/service/jobs/lookup-records.yaml bench/service/jobs/tuning-load-cuda.yaml
