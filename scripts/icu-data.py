#!/usr/bin/env python3
"""ICU's data, cut to what the shipped program uses (docs/architecture.md, "One program").

    scripts/icu-data.py OUT_DIR        # prints the link flags; the Makefile adds them to RELEASE_LINK

A statically linked Swift program that uses Foundation's formatters (through GRDB, and our own web
pages' dates) carries ICU's whole common data package, 34 MB: every locale, every charset
converter, every transliterator. The program formats dates and numbers in English and Japanese,
in any time zone. This script takes the package the toolchain links (the member of
`lib_FoundationICU.a` that defines `icudtNN_dat`), keeps what the program can reach, and writes it
as an object that defines `__wrap_icudtNN_dat`. The flags it prints make lld link that object and
send ICU's references to `icudtNN_dat` to it (`--wrap`), so the toolchain's member is never
extracted. The data is ICU's own, byte for byte, in ICU's own "CmnD" layout (ICU's
`source/tools/toolutil/pkg_gencmn.cpp` writes it; `udata.cpp`'s `offsetTOCLookupFn` reads it by
binary search over the names, so they stay sorted by their bytes).

What is kept: everything not tied to one language (time zones, calendars, plural and unit rules,
collation's root, normalisation, character properties and names, break rules); the locales `root`,
`en` (all of them: `en_GB` falls back through `en_001` to `en`) and `ja`; the Japanese and Chinese
word dictionary (break iteration over Japanese text). What is dropped: the other languages'
locale data; the charset converters (`*.cnv`: the program reads and writes UTF-8 and UTF-16 only,
which ICU converts without data); the transliterators; the other scripts' word dictionaries.
A lookup of a dropped item fails as for any missing locale: ICU falls back to the root locale.

Works on any little-endian target (amd64, arm64): the toolchain's paths come from
`swift -print-target-info`.
"""
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

KEPT_LANGUAGES = ("en", "ja")
LOCALE = re.compile(r"^[a-z]{2,3}(_[A-Za-z0-9]+)*$")


def keep(name):
    """Whether the item (a package path such as icudt76l/zone/ja.res) stays."""
    path = name.split("/", 1)[1]
    base = path.rsplit("/", 1)[-1]
    if base.endswith(".cnv") or path.startswith("translit/"):
        return False
    if path.startswith("brkitr/") and base.endswith(".dict") and not base.startswith("cj"):
        return False
    stem = base.rsplit(".", 1)[0]
    if base.endswith(".res") and LOCALE.match(stem):
        return stem.split("_")[0] in KEPT_LANGUAGES
    return True


def read_package(data):
    """(header, [(name, bytes)]) of an ICU common data package."""
    header_size, magic1, magic2 = struct.unpack_from("<HBB", data, 0)
    if (magic1, magic2) != (0xDA, 0x27):
        sys.exit("icu-data: not ICU data (magic)")
    if data[8] != 0:
        sys.exit("icu-data: big-endian ICU data; this script reads little-endian packages only")
    if data[12:16] != b"CmnD":
        sys.exit(f"icu-data: not a common data package ({data[12:16]!r})")
    toc = header_size
    count = struct.unpack_from("<I", data, toc)[0]
    entries = [struct.unpack_from("<II", data, toc + 4 + 8 * i) for i in range(count)]
    items = []
    for i, (name_offset, data_offset) in enumerate(entries):
        name = data[toc + name_offset: data.index(b"\0", toc + name_offset)].decode("ascii")
        end = entries[i + 1][1] if i + 1 < count else len(data) - toc
        items.append((name, data[toc + data_offset: toc + end]))
    return data[:header_size], items


def write_package(header, items):
    """The package's bytes: the same header, a table of contents sorted by name, items 16-aligned."""
    items = sorted(items, key=lambda item: item[0].encode("ascii"))
    names = bytearray()
    toc_size = 4 + 8 * len(items)
    data_start = (toc_size + sum(len(n) + 1 for n, _ in items) + 15) & ~15
    body, entries = bytearray(), []
    for name, item in items:
        entries.append((toc_size + len(names), data_start + len(body)))
        names += name.encode("ascii") + b"\0"
        body += item + b"\0" * (-len(item) % 16)
    toc = struct.pack("<I", len(items)) + b"".join(struct.pack("<II", *e) for e in entries)
    return header + toc + bytes(names) + b"\0" * (data_start - toc_size - len(names)) + bytes(body)


def run(*args):
    try:
        return subprocess.run(args, check=True, capture_output=True, text=True).stdout
    except FileNotFoundError:
        sys.exit(f"icu-data: {args[0]} not found: put the Swift toolchain on PATH (or set SWIFT), and install binutils")
    except subprocess.CalledProcessError as error:
        sys.exit(f"icu-data: {' '.join(args)} failed: {error.stderr.strip()}")


def toolchain_package(swift, work):
    """(symbol, bytes) of the ICU data package the toolchain links statically."""
    info = json.loads(run(swift, "-print-target-info"))
    archive = Path(info["paths"]["runtimeResourcePath"] + "_static") / info["target"]["platform"] / "lib_FoundationICU.a"
    if not archive.exists():
        sys.exit(f"icu-data: {archive} is missing: a toolchain with the static Swift SDK is needed")
    # binutils (ar, objdump, objcopy), which packaging/build-deb.sh needs too.
    members = [m for m in run("ar", "t", str(archive)).split() if m.startswith("icu_packaged_data")]
    if len(members) != 1:
        sys.exit(f"icu-data: {archive}: expected one icu_packaged_data member, found {members}")
    member = work / members[0]
    member.write_bytes(subprocess.run(["ar", "p", str(archive), members[0]], check=True, capture_output=True).stdout)
    # objdump -t: VALUE FLAGS SECTION SIZE NAME
    for line in run("objdump", "-t", str(member)).splitlines():
        fields = line.split()
        if len(fields) >= 5 and re.fullmatch(r"icudt\d+_dat", fields[-1]):
            symbol, section = fields[-1], fields[-3]
            value, size = int(fields[0], 16), int(fields[-2], 16)
            break
    else:
        sys.exit(f"icu-data: no icudtNN_dat symbol in {archive}({members[0]})")
    raw = work / "section.bin"
    run("objcopy", "-O", "binary", f"--only-section={section}", str(member), str(raw))
    data = raw.read_bytes()[value: value + size]
    member.unlink()
    raw.unlink()
    return symbol, data


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n\n")[1])
    out = Path(sys.argv[1]).resolve()
    out.mkdir(parents=True, exist_ok=True)
    symbol, data = toolchain_package(os.environ.get("SWIFT", "swift"), out)
    header, items = read_package(data)
    kept = [item for item in items if keep(item[0])]
    package = write_package(header, kept)
    digest = hashlib.sha256(package).hexdigest()[:12]
    # The name carries the content: new data is a new link flag, so SwiftPM relinks.
    obj = out / f"icu-data-{digest}.o"
    if not obj.exists():
        dat = out / f"icu-data-{digest}.dat"
        dat.write_bytes(package)
        asm = out / f"icu-data-{digest}.s"
        asm.write_text(
            f'    .section .rodata.{symbol},"a"\n'
            f"    .globl __wrap_{symbol}\n"
            f"    .type __wrap_{symbol}, @object\n"
            "    .balign 16\n"
            f"__wrap_{symbol}:\n"
            f'    .incbin "{dat}"\n'
            f"    .size __wrap_{symbol}, {len(package)}\n"
            '    .section .note.GNU-stack,"",@progbits\n')
        # The toolchain's own clang assembles it (the Swift toolchain ships one; no C compiler needed).
        swift = shutil.which(os.environ.get("SWIFT", "swift"))
        clang = Path(swift).resolve().parent / "clang" if swift else Path("clang")
        run(str(clang), "-c", "-o", str(obj), str(asm))
        (out / "icu-data.txt").write_text(
            f"{symbol}: {len(kept)} of {len(items)} items, {len(package)} of {len(data)} bytes\n")
    print(f"-Xlinker --wrap={symbol} -Xlinker {obj}")


if __name__ == "__main__":
    main()
