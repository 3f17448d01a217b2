#!/usr/bin/env bash
# Installs what building, running and testing RoomBridge needs on Debian 12 / Raspberry Pi OS:
# the C libraries (libnfc, libdbus, libbluetooth, SQLite), the reference tools the tests and the
# benchmarks compare against (nfc-list, nfc-poll, dbus-daemon, bluetoothctl,
# systemd-socket-activate), PostgreSQL (the tests' private server: scripts/pg-test-server.sh)
# and the Python test clients.
# Safe to run again: it installs only what is missing. Needs root (or sudo) for apt-get.
set -euo pipefail

APT_PACKAGES=(
  pkg-config libnfc-dev libnfc-bin libnfc-examples libusb-dev libdbus-1-dev libbluetooth-dev libsqlite3-dev sqlite3
  dbus bluez systemd util-linux python3 python3-pip libglib2.0-bin xxd python3-dbus python3-gi
  varlink-go dpkg-dev lintian man-db chromium chromium-driver fonts-noto-cjk poppler-utils
  postgresql python3-yaml python3-jinja2
)
PIP_PACKAGES=(varlink==31.0.0 pytest pytest-timeout ndeflib==0.3.3 bleak==3.1.0 PySwitchbot==3.1.0 selenium==4.51.0 nfcpy==1.0.4 ibeacon-ble==1.2.0 prometheus-client==0.26.0 schemathesis==4.32.5)

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: run as root or install sudo" >&2; exit 1; }
  sudo_cmd=(sudo)
fi

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: apt-get install ${missing[*]}"
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# pip answers "already satisfied" without the network when the pinned versions are installed.
python3 -m pip install -q --disable-pip-version-check "${PIP_PACKAGES[@]}" 2>/dev/null \
  || python3 -m pip install -q --disable-pip-version-check --break-system-packages "${PIP_PACKAGES[@]}"

command -v swift >/dev/null || {
  echo "install-deps: no Swift toolchain on PATH; install Swift 6.1 or newer (https://www.swift.org/install/linux/)" >&2
  exit 1
}
