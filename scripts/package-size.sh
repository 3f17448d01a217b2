#!/usr/bin/env bash
# The package's size, measured (make bench; docs/benchmarks.md, "Package size"):
#   scripts/package-size.sh OUT_DIR
# Builds, statically linked as `make deb` does, the package's one program (`roombridge`, with the
# linker's map), the three programs 0.1.0 shipped instead and the two minimal idle peers (the floor
# with and without Foundation); breaks the one program down by
# library (scripts/binary-sizes.py); builds the package (xz, as `make deb`); reads Debian's peers
# from apt. Writes OUT_DIR/package-size.md (the section), OUT_DIR/one/ (the program as installed:
# roombridged and its two links) and OUT_DIR/three/ (0.1.0's three stripped programs), which the
# benchmark starts side by side. Builds in .build-static: a static build compiles every module
# differently (-static-stdlib), so sharing .build with the usual release build would make each
# build recompile everything the other one built.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "$1" && cd "$1" && pwd)
swift=${SWIFT:-swift}
cd "$top"
# RELEASE_LINK: the Makefile's link flags for the shipped program (lld, packed relative relocations, no
# symbols of its own exported).
link=${RELEASE_LINK:?"set RELEASE_LINK as the Makefile does (make bench)"}
# ICU_LINK: ICU's data cut to English and Japanese (scripts/icu-data.py), as the Makefile links it.
icu=${ICU_LINK:?"set ICU_LINK as the Makefile does (make bench)"}
# shellcheck disable=SC2086  # the flags are words
build_uncut() { $swift build -c release --static-swift-stdlib $link --scratch-path "$top/.build-static" "$@"; }
# shellcheck disable=SC2086
build() { build_uncut $icu "$@"; }
bin=$(build --show-bin-path)
rm -rf "$out/one" "$out/three" "$out/deb"
mkdir -p "$out/one" "$out/three" "$out/deb"
strip_to() { strip --strip-unneeded --remove-section=.comment --remove-section=.note -o "$2" "$1"; }

for program in roombridged roombridgectl roombridge-web; do
  build --product "$program" >&2
  strip_to "$bin/$program" "$out/three/$program"
done
# The floor: minimal programs (they only wait), with FoundationEssentials alone and with Foundation.
for program in idle-peer-essentials idle-peer-foundation; do
  build --product "$program" >&2
  strip_to "$bin/$program" "$out/$program"
done
# The one program with ICU's whole data, for the comparison; then linked as shipped.
build_uncut --product roombridge >&2
strip_to "$bin/roombridge" "$out/roombridge-uncut"
build --product roombridge -Xlinker -Map="$out/roombridge.map" -Xlinker --why-extract="$out/roombridge.why" >&2
breakdown=$(python3 scripts/binary-sizes.py "$out/roombridge.map" "$out/roombridge.why" "$bin/roombridge" --markdown)
deb=$(packaging/build-deb.sh "$bin" "$out/deb" | tail -1)
dbgsym=$(ls "$out/deb"/roombridge-dbgsym_*.deb)
# The program as the package installs it, which the benchmark starts.
dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/bin/roombridged > "$out/one/roombridged"
chmod 0755 "$out/one/roombridged"
ln -sf roombridged "$out/one/roombridgectl"
ln -sf roombridged "$out/one/roombridge-web"

mb() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1e6 }'; }
kib_mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k * 1024 / 1e6 }'; }
one=$(stat -c %s "$out/one/roombridged")
three=0
for program in roombridged roombridgectl roombridge-web; do three=$((three + $(stat -c %s "$out/three/$program"))); done
installed_kib=$(dpkg-deb -f "$deb" Installed-Size)
deb_bytes=$(stat -c %s "$deb")
# 0.1.0's installed size: the same tree with its three programs in place of the one.
old_installed_kib=$(( installed_kib + (three - one) / 1024 ))
peer() { apt-cache show "$1" 2>/dev/null | awk '/^Version:/{v=$2} /^Installed-Size:/{print v, $2; exit}'; }

{
  echo "Built by \`scripts/package-size.sh\` in this run: release, Swift runtime linked statically, linked as the"
  echo "Makefile's \`RELEASE_LINK\` and \`ICU_LINK\` say (lld, packed relative relocations, no symbols of its own"
  echo "exported, ICU's data cut to English and Japanese), stripped as \`packaging/build-deb.sh\` strips; the package"
  echo "compressed with xz as \`make deb\` does. The 0.1.0 rows are its three programs, built, linked and stripped the"
  echo "same way (0.1.0 itself was linked by gold, with ICU's whole data)."
  echo
  echo "| what | MB |"
  echo "|---|---:|"
  for program in roombridged roombridgectl roombridge-web; do
    echo "| 0.1.0: \`$program\`, its own program | $(mb "$(stat -c %s "$out/three/$program")") |"
  done
  echo "| 0.1.0: the three programs | $(mb "$three") |"
  echo "| 0.1.0: installed size (the same tree with the three programs) | $(kib_mb "$old_installed_kib") |"
  echo "| now: \`roombridge\`, the one program (installed as \`roombridged\`, two links) | $(mb "$one") |"
  echo "| now, with ICU's whole data (linked without \`ICU_LINK\`): the one program | $(mb "$(stat -c %s "$out/roombridge-uncut")") |"
  echo "| now: installed size (\`Installed-Size\`) | $(kib_mb "$installed_kib") |"
  echo "| now: the \`.deb\` (xz) | $(mb "$deb_bytes") |"
  echo "| now: \`roombridge-dbgsym\`, the debug symbols for backtraces, installed only by those who want them (\`.deb\`, xz) | $(mb "$(stat -c %s "$dbgsym")") |"
  echo "| floor: a minimal Swift program importing Foundation, none of its formatters (\`idle-peer-foundation\`; lld keeps ICU's data in it, cut as the program's is) | $(mb "$(stat -c %s "$out/idle-peer-foundation")") |"
  echo "| floor: a minimal Swift program with FoundationEssentials only (\`idle-peer-essentials\`) | $(mb "$(stat -c %s "$out/idle-peer-essentials")") |"
  for p in gpsd pcscd bluez; do
    read -r version kib <<<"$(peer "$p")" || true
    [ -n "${kib:-}" ] && echo "| peer: Debian's \`$p\` $version, installed size | $(kib_mb "$kib") |"
  done
  echo
  echo "Where the one program's bytes come from (\`scripts/binary-sizes.py\`, from the linker's map):"
  echo
  echo "$breakdown"
} > "$out/package-size.md"
cat "$out/package-size.md"
