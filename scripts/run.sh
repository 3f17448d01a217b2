#!/usr/bin/env bash
# Runs the whole RoomBridge system on this machine from the debug build (make run):
# roombridged on a private socket with a temporary database seeded with sample devices, users and
# badges; the PN532 simulator when no NFC reader is found, the BlueZ simulator (on a private
# D-Bus bus) when bluetoothd is not reachable. Ctrl-C stops everything and removes the directory.
#
#   scripts/run.sh                 run until Ctrl-C
#   scripts/run.sh --scenario      run the scripted tour, exit 0 only if every step behaved
#   scripts/run.sh --realistic     PN532 simulator with 115200-baud and RF timing
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${ROOMBRIDGE_BIN:-$PWD/.build/debug}
SCENARIO=0
REALISTIC=()
for arg in "$@"; do
  case "$arg" in
    --scenario) SCENARIO=1 ;;
    --realistic) REALISTIC=(--realistic-timing) ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument $arg (try --help)" >&2; exit 64 ;;
  esac
done

RUN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/roombridge-run.XXXXXX")
SOCK="$RUN_DIR/roombridge.sock"
pids=()
cleanup() {
  trap - EXIT INT TERM
  # Every process was started directly with & (no wrapper shell), so $! is its own pid; stop them by
  # pid, newest first (the daemon before the simulators, the bus last). Background processes of a
  # non-interactive shell ignore SIGINT, so without this they would outlive Ctrl-C.
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[i]}" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$RUN_DIR"
  [ "$SCENARIO" = 1 ] || echo "roombridge: stopped; $RUN_DIR removed"
}
trap cleanup EXIT
# Ctrl-C is how `make run` is meant to end: a clean stop, exit 0 (make would report "Error 130"
# otherwise). The scenario keeps the conventional status: there an interrupt is a failure.
if [ "$SCENARIO" = 1 ]; then trap 'exit 130' INT TERM; else trap 'exit 0' INT; trap 'exit 143' TERM; fi
log() { [ "$SCENARIO" = 1 ] && echo "[run] $*" >&2 || echo "$*"; }

# --- NFC: a real reader if libnfc finds one, else the PN532 simulator on a pty -------------------
export LIBNFC_LOG_LEVEL=${LIBNFC_LOG_LEVEL:-0}
NFC_ARGS=()
PN532_CTL=""
FOUND_READER=""
if [ -z "${ROOMBRIDGE_FORCE_SIMULATORS:-}" ] && [ "$SCENARIO" = 0 ]; then
  # nfc-scan-device prints "- <name>:" then the connstring, indented, for each device it finds.
  FOUND_READER=$(timeout 10 nfc-scan-device 2>/dev/null | sed -n 's/^    \([a-z0-9_]*:.*\)/\1/p' | head -1 || true)
fi
if [ -n "$FOUND_READER" ]; then
  log "NFC: using the reader libnfc finds ($FOUND_READER)"
  NFC_ARGS=(--nfc-readers "front=$FOUND_READER")
else
  PN532_CTL="$RUN_DIR/pn532.ctl"
  "$BIN/pn532-sim" run --link "$RUN_DIR/pn532.tty" --control "$PN532_CTL" "${REALISTIC[@]}" \
    > "$RUN_DIR/pn532.out" 2> "$RUN_DIR/pn532-sim.log" &
  pids+=($!)
  for _ in $(seq 1 100); do grep -q ready "$RUN_DIR/pn532.out" 2>/dev/null && break; sleep 0.05; done
  NFC_ARGS=(--nfc-readers "front=pn532_uart:$RUN_DIR/pn532.tty")
  log "NFC: PN532 simulator on $(readlink "$RUN_DIR/pn532.tty")"
fi

# --- Curtain: the system's bluetoothd if it answers, else the BlueZ simulator on a private bus ------
BLUEZ_CTL=""
if [ -z "${ROOMBRIDGE_FORCE_SIMULATORS:-}" ] && [ "$SCENARIO" = 0 ] \
   && timeout 5 dbus-send --system --print-reply --dest=org.bluez / org.freedesktop.DBus.ObjectManager.GetManagedObjects >/dev/null 2>&1; then
  log "Curtain: using bluetoothd on the system bus"
else
  # A private bus: dbus-daemon itself is started here (not through bluez-sim, whose watchdog shell
  # would die on Ctrl-C and leave the bus running), so cleanup stops it by its pid.
  BLUEZ_CTL="$RUN_DIR/bluez.ctl"
  cat > "$RUN_DIR/bus.conf" <<EOB
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$RUN_DIR/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default"><allow user="*"/><allow own="*"/><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/></policy>
</busconfig>
EOB
  dbus-daemon --config-file="$RUN_DIR/bus.conf" --nofork --nopidfile --print-address=1 \
    > "$RUN_DIR/bus.address" 2> "$RUN_DIR/dbus-daemon.log" < /dev/null &
  pids+=($!)
  for _ in $(seq 1 100); do [ -s "$RUN_DIR/bus.address" ] && break; sleep 0.05; done
  export DBUS_SYSTEM_BUS_ADDRESS=$(head -1 "$RUN_DIR/bus.address")
  [ -n "$DBUS_SYSTEM_BUS_ADDRESS" ] || { echo "dbus-daemon did not start; see $RUN_DIR/dbus-daemon.log" >&2; exit 1; }
  "$BIN/bluez-sim" run --bus-address "$DBUS_SYSTEM_BUS_ADDRESS" --control "$BLUEZ_CTL" --speed 40 --time 07:00 \
    > "$RUN_DIR/bluez.out" 2> "$RUN_DIR/bluez-sim.log" &
  pids+=($!)
  for _ in $(seq 1 100); do grep -q DBUS_SYSTEM_BUS_ADDRESS "$RUN_DIR/bluez.out" 2>/dev/null && break; sleep 0.05; done
  grep -q DBUS_SYSTEM_BUS_ADDRESS "$RUN_DIR/bluez.out" || { echo "bluez-sim did not start; see $RUN_DIR/bluez-sim.log" >&2; exit 1; }
  log "Curtain: BlueZ simulator on a private bus ($DBUS_SYSTEM_BUS_ADDRESS)"
fi

# --- The daemon: the same binary as on real hardware, only configuration differs -------------------
# With the simulator, presence too: a region for Aiko's phone (an iBeacon added below).
AIKO_BEACON=E2C56DB5-DFFB-48D2-B060-D0F5A71096E0
if [ -n "$BLUEZ_CTL" ]; then
  printf '[presence]\nregions = ["aiko=%s/1 user=U-0001"]\nexit_after = 10\ndefault_place = "front desk"\n' \
    "$AIKO_BEACON" > "$RUN_DIR/run.toml"
else
  : > "$RUN_DIR/run.toml"
fi
# The scenario taps a device again at once to return it; a person waits longer than the repeat
# window (lending.repeat_window, 5 s), inside which a second tap changes nothing.
LENDING_ARGS=()
[ "$SCENARIO" = 1 ] && LENDING_ARGS=(--lending-repeat-window 0)
"$BIN/roombridged" --config "$RUN_DIR/run.toml" --socket-path "$SOCK" --socket-group "" \
  --auth-group "$(id -gn)" --database-path "$RUN_DIR/roombridge.sqlite" --log-level info \
  "${NFC_ARGS[@]}" "${LENDING_ARGS[@]}" --nfc-modulations iso14443a --nfc-modulations felica212 \
  2> >(if [ "$SCENARIO" = 1 ]; then cat > "$RUN_DIR/roombridged.log"; else sed -u 's/^/[roombridged] /' >&2; fi) &
pids+=($!)
DAEMON_PID=$!
for _ in $(seq 1 200); do [ -S "$SOCK" ] && break; sleep 0.05; done
[ -S "$SOCK" ] || { echo "roombridged did not start:" >&2; cat "$RUN_DIR/roombridged.log" >&2 2>/dev/null; exit 1; }

# --- Sample data ---------------------------------------------------------------------------------
ctl() { "$BIN/roombridgectl" "$@" --socket "$SOCK" > /dev/null; }
ctl users add U-0001 --name "Aiko Tanaka"
ctl badges bind 04A1B2C3 --user U-0001
ctl users add U-0002 --name "Ben Okafor"
ctl badges bind 0102030405060708 --user U-0002 --kind felica
ctl devices add D-0001 --group android-phone --model "Pixel 7" --serial SN-P7-0001 --os 14 --connector USB-C
ctl devices add D-0002 --group iphone --model "iPhone 15" --serial SN-I15-0002 --os 17.1 --connector USB-C
ctl devices add D-0003 --group ipad --model "iPad Air" --serial SN-IPA-0003 --os 17.0 --connector USB-C --status broken
# Only a registered tag lends: bind the UID pn532-sim gives the shorthand tag `device:D-0001…`
# (derived from the device ID), as `roombridgectl tag write` does for a real tag.
ctl tag bind 04ED2C4CAC92A2 --device D-0001
if [ -n "$BLUEZ_CTL" ] && [ "$SCENARIO" = 0 ]; then
  "$BIN/bluez-sim" ctl --control "$BLUEZ_CTL" beacon add "$AIKO_BEACON" 1 2 tx=-59 rssi=-65 noise=2 interval=300 \
    address=F0:00:00:00:00:01 > /dev/null
fi

if [ "$SCENARIO" = 1 ]; then
  status=0
  python3 scripts/scenario.py --socket "$SOCK" --bin "$BIN" --pn532 "$PN532_CTL" --bluez "$BLUEZ_CTL" || status=$?
  [ "$status" = 0 ] || { echo "--- roombridged log ---" >&2; tail -40 "$RUN_DIR/roombridged.log" >&2; }
  exit "$status"
fi

# --- The web front: the kiosk screen and the admin's pages, a Varlink client of the daemon ----------
WEB_PORT=${ROOMBRIDGE_WEB_PORT:-8080}
echo roombridge | "$BIN/roombridge-web" hash-password admin > "$RUN_DIR/web-accounts"
"$BIN/roombridge-web" serve --socket "$SOCK" --port "$WEB_PORT" --accounts "$RUN_DIR/web-accounts" \
  2> >(sed -u 's/^/[roombridge-web] /' >&2) &
pids+=($!)

P="$BIN/pn532-sim ctl --control $PN532_CTL"
B="$BIN/bluez-sim ctl --control $BLUEZ_CTL"
cat <<EOT

RoomBridge is running.

  Kiosk screen:  http://127.0.0.1:$WEB_PORT/kiosk
  Admin pages:   http://127.0.0.1:$WEB_PORT/devices   (sign in as admin, password roombridge)
  Curtain:       http://127.0.0.1:$WEB_PORT/curtain

In another terminal:

  export ROOMBRIDGE_SOCKET=$SOCK PATH=$BIN:\$PATH
  roombridgectl status                 # readers, last tap, curtain, lending
  roombridgectl watch                  # live events, one line each (--json for JSON)
  roombridgectl devices list           # D-0001 Pixel 7, D-0002 iPhone 15, D-0003 iPad Air (broken)
  roombridgectl rentals                # what is lent; roombridgectl history --format csv
  roombridgectl curtain open --wait    # also: close, stop, move 40, schedule --open 07:30 --close 21:15
EOT
if [ -n "$PN532_CTL" ]; then cat <<EOT

The PN532 simulator stands in for the reader (tap = place, then remove):
  $P place isoa:04A1B2C3                # Aiko's badge: arms lending for 30 s
  $P remove
  $P place "device:D-0001:Pixel 7"      # a device tag: lent to Aiko (tap it again to return it)
  $P remove
  $P place felica:0102030405060708      # Ben's FeliCa badge
  $P place ntag215                      # an unknown, empty tag: reported with its UID
  roombridgectl tag write D-0002        # then: $P place ntag213:blank  (registers a new tag)
EOT
fi
if [ -n "$BLUEZ_CTL" ]; then cat <<EOT

The BlueZ simulator stands in for bluetoothd and the curtain:
  $B press open                         # the wall switch: remote commands are refused while it moves
  $B drop-link                          # link loss: roombridged reconnects
  $B schedule 06:45 off                 # change the schedule on the device (it is adopted)

and for the iBeacons (roombridgectl presence shows who is in the region "aiko"):
  $B beacon rssi F0:00:00:00:00:01 -85  # Aiko's phone moves away (far); -50 brings it near
  $B beacon vanish F0:00:00:00:00:01    # she leaves: the region is exited after 10 s
  $B beacon appear F0:00:00:00:00:01
EOT
fi
echo; echo "Ctrl-C here stops everything."
wait "$DAEMON_PID"
