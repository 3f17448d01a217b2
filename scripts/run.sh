#!/usr/bin/env bash
# Runs RoomBridge on this machine from the debug build: roombridged on a private socket with a
# temporary database. Ctrl-C stops everything and removes the temporary directory.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${ROOMBRIDGE_BIN:-$PWD/.build/debug}
RUN_DIR=$(mktemp -d /tmp/roombridge-run.XXXXXX)
SOCK="$RUN_DIR/roombridge.sock"
pids=()

cleanup() {
  trap - EXIT INT TERM
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$RUN_DIR"
  echo "roombridge: stopped, $RUN_DIR removed"
}
trap cleanup EXIT INT TERM

"$BIN/roombridged" --socket-path "$SOCK" --socket-group "" --database-path "$RUN_DIR/roombridge.sqlite" \
  --log-level info 2> >(sed -u 's/^/[roombridged] /' >&2) &
pids+=($!)

for _ in $(seq 1 100); do [ -S "$SOCK" ] && break; sleep 0.1; done
[ -S "$SOCK" ] || { echo "roombridged did not start; see the log above" >&2; exit 1; }

cat <<EOT

RoomBridge is running (socket $SOCK). In another terminal:

  export ROOMBRIDGE_SOCKET=$SOCK
  $BIN/roombridgectl status          # readers, last tap, curtain, lending
  $BIN/roombridgectl watch           # live events, one line each (--json for JSON)

Ctrl-C here stops everything.
EOT
wait "${pids[0]}"
