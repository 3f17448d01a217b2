#!/usr/bin/env bash
# A private PostgreSQL server for the tests: its own data directory and Unix socket in DIR, a free
# port on 127.0.0.1, run as an unprivileged user (postgres refuses to run as root; as root the
# server runs as `nobody`).
#
#   scripts/pg-test-server.sh start DIR   # prints the URL, e.g. postgresql://roombridge@127.0.0.1:41234/roombridge
#   scripts/pg-test-server.sh stop DIR
#
# The role `roombridge` is a superuser (the tests create a database per test). Over TCP it
# authenticates with a password (scram-sha-256), kept in DIR/password as roombridged reads it
# from `database.password_file`; over the socket in DIR it is trusted.
# `make test` starts one and exports ROOMBRIDGE_PG_URL and ROOMBRIDGE_PG_PASSWORD_FILE.
# Without fsync (commits still write the WAL to the kernel before they answer, so killing the
# server loses nothing acknowledged): the tests stop and kill the server process, never the
# machine, and a server that flushes to a disk shared with two builds stalled commits for seconds.
set -euo pipefail

usage() { echo "usage: $0 start|stop|url DIR" >&2; exit 64; }
[ $# -eq 2 ] || usage
action=$1
dir=$(mkdir -p "$2" && cd "$2" && pwd)

bindir=${PG_BINDIR:-}
if [ -z "$bindir" ]; then
  for candidate in /usr/lib/postgresql/*/bin; do [ -x "$candidate/pg_ctl" ] && bindir=$candidate; done
fi
[ -n "$bindir" ] && [ -x "$bindir/pg_ctl" ] || {
  echo "pg-test-server: no PostgreSQL server binaries (pg_ctl); install Debian's package postgresql (scripts/install-deps.sh)" >&2
  exit 69
}

# Run a server program as the owner of the data directory.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u nobody -- "$@"; else "$@"; fi
}

url() { echo "postgresql://roombridge@127.0.0.1:$(cat "$dir/port")/roombridge?sslmode=disable"; }

case $action in
  start)
    if [ ! -s "$dir/data/PG_VERSION" ]; then
      [ "$(id -u)" -ne 0 ] || chown nobody:nogroup "$dir"
      chmod 0755 "$dir"
      # A password of 32 random hex digits, readable by the tests (and by roombridged in them).
      head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$dir/password"
      chmod 0600 "$dir/password"; [ "$(id -u)" -ne 0 ] || chown nobody "$dir/password"
      as_owner "$bindir/initdb" -D "$dir/data" -U roombridge --pwfile="$dir/password" \
        --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 || {
          cat "$dir/initdb.log" >&2; exit 1; }
      # A free port, chosen now and kept for the directory's later starts.
      python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' > "$dir/port"
    fi
    port=$(cat "$dir/port")
    if ! as_owner "$bindir/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
      as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=off" start >/dev/null || {
          tail -20 "$dir/server.log" >&2; exit 1; }
    fi
    if [ ! -e "$dir/created" ]; then
      "$bindir/psql" -X -q -h "$dir" -p "$port" -U roombridge -d postgres -c 'CREATE DATABASE roombridge' >/dev/null
      touch "$dir/created"
    fi
    url
    ;;
  stop)
    if [ -s "$dir/data/PG_VERSION" ] && as_owner "$bindir/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
      as_owner "$bindir/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >/dev/null
    fi
    ;;
  url)
    url
    ;;
  *) usage ;;
esac
