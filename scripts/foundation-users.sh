#!/usr/bin/env bash
# Which modules of a build need full Foundation: for each module's object files, the undefined
# symbols that only libFoundation provides (mangled with the module name "10Foundation"; what
# FoundationEssentials provides is mangled "20FoundationEssentials" and does not count).
# One such module is enough for the executable to link libFoundation, and with it
# FoundationInternationalization and ICU (see docs/benchmarks.md, idle RSS).
#
#   scripts/foundation-users.sh [BUILD_DIR]     # default .build/debug; .build/release works too
#   scripts/foundation-users.sh .build/debug -v # also list the symbols, demangled
set -euo pipefail
dir=${1:-.build/debug}
verbose=${2:-}
demangle=$(command -v swift-demangle || echo "swift demangle")
for build in "$dir"/*.build; do
  module=$(basename "$build" .build)
  compgen -G "$build/*.o" >/dev/null || continue
  symbols=$(nm -u "$build"/*.o 2>/dev/null | awk '{print $2}' | grep '10Foundation' | sort -u || true)
  [ -n "$symbols" ] || continue
  printf '%-28s %4d\n' "$module" "$(grep -c . <<<"$symbols")"
  if [ "$verbose" = "-v" ]; then $demangle --simplified <<<"$symbols" | sed 's/^/    /'; fi
done
