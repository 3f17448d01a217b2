#!/usr/bin/env bash
# Builds roombridge_VERSION_ARCH.deb with dpkg-deb from the already built multi-call program
# `roombridge` (roombridged, roombridgectl and roombridge-web in one file):
#   packaging/build-deb.sh BIN_DIR [OUT_DIR]
# `make deb` passes the release build; the package test passes the debug build (the same files;
# its binaries are larger and find the Swift runtime through the toolchain's RUNPATH).
# Also writes roombridge-dbgsym_VERSION_ARCH.deb, the program's debug symbols (printed first; the package
# itself is the last line). DEB_COMPRESSION=gzip builds faster than the default xz. Lays the tree out with
# `make install` (one list of files),
# adds the Debian parts (maintainer scripts, conffiles, copyright, changelog, man pages) and
# computes Depends: with dpkg-shlibdeps from the libraries the binaries link.
set -euo pipefail

bin=$(cd "$1" && pwd)
out=$(mkdir -p "${2:-.}" && cd "${2:-.}" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
deb="$top/packaging/deb"
maintainer=${DEB_MAINTAINER:-"RoomBridge maintainers <maintainers@roombridge.invalid>"}

for tool in dpkg-deb dpkg-shlibdeps dpkg-parsechangelog strip objcopy nm readelf python3; do
  command -v "$tool" >/dev/null || { echo "build-deb: $tool is missing (apt-get install dpkg-dev binutils python3)" >&2; exit 1; }
done
[ -x "$bin/roombridge" ] || {
  echo "build-deb: no roombridge (the multi-call program) in $bin; build it first (make release)" >&2; exit 1; }

version=$("$bin/roombridge" roombridged --version | awk '{print $2}')
arch=$(dpkg --print-architecture)
changelog_version=$(sed -n '1s/^roombridge (\([^)]*\)).*/\1/p' "$deb/changelog")
if [ "$version" != "$changelog_version" ]; then
  echo "build-deb: roombridged is version $version but packaging/deb/changelog starts with $changelog_version;" \
       "add a changelog entry for $version" >&2
  exit 1
fi
# Reproducible dates: the changelog entry's.
date=$(dpkg-parsechangelog -l "$deb/changelog" -S Date)
export SOURCE_DATE_EPOCH=$(date -d "$date" +%s)
day=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%d)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root="$work/root"

# Files, where Debian 12 keeps them: units and udev rules under /lib (merged /usr or not).
make -s -C "$top" install DESTDIR="$root" PREFIX=/usr RELEASE_BIN="$bin" \
  SYSTEMDDIR=/lib/systemd/system UDEVDIR=/lib/udev/rules.d >/dev/null
rm -f "$root/usr/bin/pn532-sim" "$root/usr/bin/bluez-sim"   # simulators are not part of the package
# A completion file is sourced, not run: no "#!" line.
sed -i '1{/^#!/d}' "$root/usr/share/bash-completion/completions/roombridgectl"
# One program file: roombridgectl and roombridge-web are links to roombridged (make install).
programs=("$root/usr/bin/roombridged")
strip --strip-unneeded --remove-section=.comment --remove-section=.note "${programs[@]}"
# Its debug symbols, split off as Debian's dh_strip does, into roombridge-dbgsym (below): the release
# program exports no symbols of its own (the Makefile's RELEASE_LINK), so a crash's backtrace has names,
# files and lines only with it installed; gdb and elfutils (systemd-coredump's stack traces) find it by
# the build ID.
build_id=$(readelf -n "${programs[0]}" | sed -n 's/^ *Build ID: *\([0-9a-f]*\)$/\1/p')
[ -n "$build_id" ] || { echo "build-deb: the program has no build ID (link with --build-id)" >&2; exit 1; }
dbgroot="$work/dbgsym"
debug_file="$dbgroot/usr/lib/debug/.build-id/${build_id:0:2}/${build_id:2}.debug"
install -d "$(dirname "$debug_file")" "$dbgroot/usr/share/doc"
ln -s roombridge "$dbgroot/usr/share/doc/roombridge-dbgsym"
# Symbols and DWARF (file and line), with the debug sections compressed as dh_strip compresses them.
objcopy --only-keep-debug --compress-debug-sections=zlib "$bin/roombridge" "$debug_file"
chmod 0644 "$debug_file"

doc="$root/usr/share/doc/roombridge"
install -m 0644 "$deb/copyright" "$doc/copyright"
install -D -m 0644 "$deb/lintian-overrides" "$root/usr/share/lintian/overrides/roombridge"
gzip -9n < "$deb/changelog" > "$doc/changelog.gz"
find "$doc" -name '*.md' -size +4k -exec gzip -9n {} +

man="$root/usr/share/man"
install -d "$man/man1" "$man/man8"
sed "s/^\.TH ROOMBRIDGED 8 [^ ]*/.TH ROOMBRIDGED 8 $day/" "$top/packaging/man/roombridged.8" | gzip -9n > "$man/man8/roombridged.8.gz"
"$bin/roombridge" roombridgectl --experimental-dump-help \
  | python3 "$top/packaging/manpage.py" roombridgectl 1 "$version" "$day" | gzip -9n > "$man/man1/roombridgectl.1.gz"
"$bin/roombridge" roombridge-web --experimental-dump-help \
  | python3 "$top/packaging/manpage.py" roombridge-web 1 "$version" "$day" | gzip -9n > "$man/man1/roombridge-web.1.gz"

# Control area.
install -d -m 0755 "$root/DEBIAN"
install -m 0755 "$deb/postinst" "$deb/prerm" "$deb/postrm" "$root/DEBIAN/"
install -m 0644 "$deb/conffiles" "$root/DEBIAN/"
mkdir -p "$work/src/debian"
printf 'Source: roombridge\n\nPackage: roombridge\nArchitecture: any\n' > "$work/src/debian/control"
depends=$(cd "$work/src" && dpkg-shlibdeps -O "${programs[@]}" \
            | sed -n 's/^shlibs:Depends=//p')
# Packed relative relocations (the Makefile's RELEASE_LINK) need the glibc that reads them: the program
# names the version GLIBC_ABI_DT_RELR, which no symbol carries, so dpkg-shlibdeps cannot see it.
if readelf -V "${programs[0]}" | grep -q 'Name: GLIBC_ABI_DT_RELR'; then
  libc=$(sed -n 's/.*libc6 (>= \([^)]*\)).*/\1/p' <<<"$depends")
  if [ -z "$libc" ]; then
    depends="$depends, libc6 (>= 2.36)"
  elif dpkg --compare-versions "$libc" lt 2.36; then
    depends=${depends/"libc6 (>= $libc)"/"libc6 (>= 2.36)"}
  fi
fi
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@SIZE@/$size/" \
    -e "s/@MAINTAINER@/$maintainer/" -e "s/@DEPENDS@/$depends, systemd/" \
    "$deb/control.in" > "$root/DEBIAN/control"
(cd "$root" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/md5sums"

# Every file root-owned, in the archive, whoever builds it.
find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
package="$out/roombridge_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Z"${DEB_COMPRESSION:-xz}" --build "$root" "$package" >/dev/null

# roombridge-dbgsym, with the fields Debian's tools give a .ddeb (in a .deb).
install -d -m 0755 "$dbgroot/DEBIAN"
{
  echo "Package: roombridge-dbgsym"
  echo "Source: roombridge"
  echo "Version: $version"
  echo "Auto-Built-Package: debug-symbols"
  echo "Architecture: $arch"
  echo "Maintainer: $maintainer"
  echo "Installed-Size: $(du -sk --exclude=DEBIAN "$dbgroot" | cut -f1)"
  echo "Depends: roombridge (= $version)"
  echo "Section: debug"
  echo "Priority: optional"
  echo "Description: debug symbols for roombridge"
  echo "Build-Ids: $build_id"
} > "$dbgroot/DEBIAN/control"
(cd "$dbgroot" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) > "$dbgroot/DEBIAN/md5sums"
chmod 0644 "$dbgroot/DEBIAN/md5sums"
find "$dbgroot" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
dbgsym="$out/roombridge-dbgsym_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Z"${DEB_COMPRESSION:-xz}" --build "$dbgroot" "$dbgsym" >/dev/null
# The debug symbols' package first, the package itself last (make deb and the tests read the last line).
echo "$dbgsym"
echo "$package"
