#!/usr/bin/env bash
# Builds and runs the libFuzzer target for the NDEF decoders (message decode, Type 2 TLV
# scan, device record) with AddressSanitizer.
#
#   scripts/fuzz-ndef.sh [seconds]     (default 60)
#
# The seed corpus is generated from Tests/NDEFTests/Fixtures into a temporary directory.
# Exits non-zero if libFuzzer finds a crash (the reproducer is kept in .build-fuzz/) and
# prints the total number of executions.
set -euo pipefail

SECONDS_TO_RUN="${1:-60}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$ROOT/.build-fuzz"
SWIFTC="${SWIFTC:-$(command -v swiftc || echo /opt/swift/usr/bin/swiftc)}"
mkdir -p "$OUT"

echo "building fuzzer with $SWIFTC"
# One module from the library sources + the harness (-module-name is needed because there is
# no main.swift entry point: -parse-as-library and libFuzzer's own main). The linker prints
# harmless "Cannot export local symbol __asan_*" warnings, so its output goes to a log.
if ! "$SWIFTC" -sanitize=fuzzer,address -parse-as-library -O -g \
    -swift-version 6 -module-name NDEFFuzz \
    "$ROOT"/Sources/NDEF/*.swift "$ROOT"/Sources/JSON/*.swift "$ROOT"/Fuzz/NDEFFuzz/main.swift \
    -o "$OUT/ndef-fuzz" > "$OUT/build.log" 2>&1; then
    grep -v "Cannot export local symbol" "$OUT/build.log" >&2
    exit 2
fi
grep -E "(error|warning):" "$OUT/build.log" | grep -v "Cannot export local symbol" >&2 || true

CORPUS="$(mktemp -d /tmp/ndef-fuzz-corpus.XXXXXX)"
trap 'rm -rf "$CORPUS"' EXIT
FIX="$ROOT/Tests/NDEFTests/Fixtures"
n=0
# Every hex message in the TSV fixtures, raw; and wrapped as a Type 2 data area (size byte + TLV).
for f in messages.tsv malformed.tsv device.tsv; do
    while IFS=$'\t' read -r name hex _; do
        [ -n "$hex" ] || continue
        printf '%s' "$hex" | xxd -r -p > "$CORPUS/$f-$name"
        len=$(( ${#hex} / 2 ))
        if [ "$len" -lt 255 ]; then
            printf 'fe03%02x%sfe' "$len" "$hex" | xxd -r -p > "$CORPUS/t2-$f-$name"
        fi
        n=$((n + 1))
    done < "$FIX/$f"
done
# The NTAG213 dump: data area from page 4, prefixed by the CC size byte.
{ printf '\x12'; tail -c +17 "$FIX/ntag213-device.bin"; } > "$CORPUS/t2-ntag213"
echo "seed corpus: $(ls "$CORPUS" | wc -l) files from $n fixtures"

LOG="$OUT/fuzz.log"
set +e
# The Swift runtime's backtracer (swift-backtrace) does not cope with ASan's crash path: it
# reads the crashed process's stack, trips ASan and then lingers. libFuzzer reports instead.
SWIFT_BACKTRACE=enable=no "$OUT/ndef-fuzz" "$CORPUS" -max_total_time="$SECONDS_TO_RUN" -max_len=4096 -timeout=10 \
    -rss_limit_mb=2048 -artifact_prefix="$OUT/" -print_final_stats=1 2>&1 | tee "$LOG" | grep -E "^#[0-9]+.*(pulse|DONE)|ERROR|SUMMARY|crash-|stat::"
status=${PIPESTATUS[0]}
set -e
execs=$(grep -E "^stat::number_of_executed_units" "$LOG" | awk '{print $2}')
echo "executions: ${execs:-unknown} in ${SECONDS_TO_RUN}s (exit status $status)"
if [ "$status" -ne 0 ]; then
    echo "FUZZER FOUND A PROBLEM: see $LOG and the crash-* file in $OUT" >&2
    exit 1
fi
