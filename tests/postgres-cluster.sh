#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests: initdb into a fresh temp
# folder, listen on 127.0.0.1 at a free port, password auth.
#   eval "$(bash tests/postgres-cluster.sh start)"
#       starts one; prints export lines for TILETUNE_TEST_POSTGRES_URL (a
#       superuser URL: the tests create a database each) and
#       TILETUNE_TEST_POSTGRES_DIR (the cluster folder)
#   bash tests/postgres-cluster.sh stop [DIR]
#       stops the cluster in DIR (default $TILETUNE_TEST_POSTGRES_DIR) and
#       removes the folder
# Runs the server as the `postgres` user when started as root (initdb
# refuses root). PG_BIN overrides where initdb/pg_ctl are found.
set -euo pipefail

pg_bin="${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}"
if [[ ! -x "$pg_bin/initdb" ]]; then
  echo "postgres-cluster: no initdb under '$pg_bin' (install postgresql or set PG_BIN)" >&2
  exit 1
fi

# Commands run as the cluster's owner.
as_owner() {
  if [[ $(id -u) -eq 0 ]]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

stop_cluster() {
  local dir="$1"
  if [[ -f "$dir/data/postmaster.pid" ]]; then
    as_owner "$pg_bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
}

start_cluster() {
  local dir password port
  dir="$(mktemp -d "${TMPDIR:-/tmp}/tiletune-pg-XXXXXX")"
  # Whatever fails from here on leaves nothing behind.
  trap 'stop_cluster "$dir"' ERR INT TERM
  if [[ $(id -u) -eq 0 ]]; then chown postgres: "$dir"; fi
  password="$(head -c 18 /dev/urandom | base64 | tr '+/' '-_')"
  as_owner bash -c "umask 077 && printf '%s\n' '$password' > '$dir/password'"
  as_owner "$pg_bin/initdb" -D "$dir/data" -U tiletune --pwfile="$dir/password" \
    --auth=scram-sha-256 --encoding=UTF8 --locale=C >"$dir/initdb.log" 2>&1
  mkdir -p "$dir/socket" && if [[ $(id -u) -eq 0 ]]; then chown postgres: "$dir/socket"; fi
  # A test cluster: no fsync (nothing here must survive a power cut), and
  # room for several test processes with pooled connections each.
  cat >>"$dir/data/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir/socket'
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 300
EOF
  # Another process may take the port between choosing and binding it.
  local attempt
  for attempt in 1 2 3 4 5; do
    port="$(free_port)"
    if as_owner "$pg_bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-p $port" start >/dev/null; then
      trap - ERR INT TERM
      echo "export TILETUNE_TEST_POSTGRES_URL='postgresql://tiletune:$password@127.0.0.1:$port/postgres'"
      echo "export TILETUNE_TEST_POSTGRES_DIR='$dir'"
      return 0
    fi
  done
  echo "postgres-cluster: the server did not start; its log:" >&2
  cat "$dir/server.log" >&2 || true
  stop_cluster "$dir"
  exit 1
}

case "${1:-}" in
  start) start_cluster ;;
  stop)
    dir="${2:-${TILETUNE_TEST_POSTGRES_DIR:-}}"
    if [[ -z "$dir" ]]; then
      echo "postgres-cluster: stop needs DIR or TILETUNE_TEST_POSTGRES_DIR" >&2
      exit 2
    fi
    stop_cluster "$dir"
    ;;
  *)
    echo "usage: $0 start | stop [DIR]" >&2
    exit 2
    ;;
esac
