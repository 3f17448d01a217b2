#!/usr/bin/env python3
"""Where a statically linked program's bytes come from, by library, from the linker's map.

    swift build -c release --static-swift-stdlib $RELEASE_LINK --product roombridge \
        -Xlinker -Map=roombridge.map -Xlinker --why-extract=roombridge.why   # RELEASE_LINK: the Makefile's
    scripts/binary-sizes.py roombridge.map roombridge.why .build/release/roombridge [--markdown]

Reads lld's map (input section, size, input file; `make deb` links with lld) and adds up, per library,
the sections that end up in the stripped program (the allocated ones: code, read-only data with
ICU's data, Swift metadata, unwind tables, data). What no input file brings — the dynamic symbol
table and its strings, relocations, the unwind index, alignment — is the rest, measured as the
stripped program's size minus the attributed bytes. docs/benchmarks.md, "Package size".
"""
import os
import re
import subprocess
import sys
import tempfile
from collections import defaultdict

# Input files to libraries. The first matching rule wins.
RULES = [
    # ICU's data as the Makefile links it: cut to English and Japanese (scripts/icu-data.py); the rest of
    # Foundation's copy of ICU is its code (and all its data, in a program linked without the cut).
    (r"/icu-data-[0-9a-f]+\.o$", "ICU's data, cut to English and Japanese (scripts/icu-data.py)"),
    (r"lib_FoundationICU\.a", "ICU's code (Foundation's copy)"),
    (r"lib(Foundation|FoundationEssentials|FoundationInternationalization|FoundationNetworking|FoundationXML|"
     r"CoreFoundation|_FoundationCShims|_FoundationCollections|_CFURLSessionInterface|_CFXMLInterface)\.a",
     "Foundation (Essentials, Internationalization, CoreFoundation)"),
    (r"swift_static/.*(libswift\w*|libdispatch|libBlocksRuntime)\.a|swiftrt\.o",
     "Swift runtime, standard library, Concurrency, Dispatch"),
    (r"/(CNIOBoringSSL|CNIOBoringSSLShims|CCryptoBoringSSL|CCryptoBoringSSLShims)\.build/", "BoringSSL (swift-nio-ssl's and swift-crypto's copies)"),
    (r"/(Crypto|_CryptoExtras|CryptoExtras|CryptoBoringWrapper|CXKCP|CXKCPShims|_CertificateInternals|X509|SwiftASN1)\.build/",
     "swift-crypto, X509, ASN.1"),
    (r"/(NIO\w*|CNIO\w*|_NIO\w*)\.build/", "SwiftNIO (with SSL, HTTP/1-2, extras, transport services)"),
    (r"/(GRDB|GRDBSQLite)\.build/", "GRDB"),
    (r"/(PostgresNIO|_ConnectionPoolModule)\.build/", "postgres-nio"),
    (r"/(AsyncHTTPClient|CAsyncHTTPClient)\.build/", "async-http-client"),
    (r"/(Hummingbird\w*|HTTPTypes\w*|MultipartKit)\.build/", "Hummingbird, HTTP types, multipart-kit"),
    (r"/(TOMLKit|CTOML)\.build/", "TOMLKit (toml++)"),
    (r"/(ArgumentParser\w*)\.build/", "swift-argument-parser"),
    (r"/(Logging|Metrics\w*|CoreMetrics|Prometheus|ServiceLifecycle|UnixSignals|ServiceContextModule|Tracing|"
     r"Instrumentation|DequeModule|InternalCollectionsUtilities|Atomics|_AtomicsShims|Algorithms|RealModule|"
     r"_NumericsShims|BasicContainers|OrderedCollections|Collections|HeapModule|Subprocess|SystemPackage|CSystem|"
     r"_SubprocessCShims|AsyncAlgorithms|_CAsyncSequenceValidationSupport|_RopeModule|HashTreeCollections|BitCollections|"
     r"ContainersPreview|ConcurrencyHelpers|ServiceContextModuleCompatibility|Configuration)\.build/",
     "small packages (log, metrics, Prometheus, service lifecycle, collections, atomics, system)"),
    # RoomBridge's own modules: the directories under Sources/ (added below).
    (r"\.build/.*\.build/", "other packages"),
    (r"libstdc\+\+|libgcc|libc_nonshared|crt\w*\.o|/usr/lib/", "C and C++ runtime start files"),
]

LINKER = "the linker's own tables: dynamic symbols and their names, relocations, PLT, unwind index"
OWN = "RoomBridge's own modules"
_sources = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Sources")
RULES.insert(len(RULES) - 2, (r"/(" + "|".join(re.escape(d).replace("-", "_") for d in sorted(os.listdir(_sources)))
                                + r")\.build/", OWN))



def allocated_sections(program):
    out = subprocess.run(["readelf", "-SW", program], capture_output=True, text=True, check=True).stdout
    names = set()
    for line in out.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+(\S+)\s+[0-9a-f]+\s+[0-9a-f]+\s+[0-9a-f]+\s+\S+\s+(\S*)", line)
        # Allocated and with bytes in the file (not .bss).
        if m and "A" in m.group(3) and m.group(2) != "NOBITS":
            names.add(m.group(1))
    return names


def library(path):
    for pattern, name in RULES:
        if re.search(pattern, path):
            return name
    return "other: " + path


# lld's map: VMA, LMA, size, alignment, then the output section, an input section indented by 8
# (`file.o:(.text.x)`, `lib.a(member.o):(.rodata)`, `<internal>:(.dynsym)` for what lld makes itself),
# or a symbol indented by 16.
LLD_LINE = re.compile(r"^\s*[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)\s+\d+ (.*)$")


def attribute_lld(lines, allocated):
    sizes = defaultdict(int)
    output = None
    for line in lines:
        m = LLD_LINE.match(line)
        if not m:
            continue
        rest = m.group(2)
        indent = len(rest) - len(rest.lstrip(" "))
        if indent == 0:
            output = rest.strip()
        elif indent == 8 and output in allocated:
            where = rest.strip().rsplit(":(", 1)[0]
            sizes[LINKER if where == "<internal>" else library(where)] += int(m.group(1), 16)
    return sizes


def attribute(map_path, allocated):
    with open(map_path, errors="replace") as f:
        if f.readline().split()[:3] != ["VMA", "LMA", "Size"]:
            sys.exit(f"{map_path}: not lld's map (link with the Makefile's RELEASE_LINK)")
        return attribute_lld(f, allocated)


def extracted_by(why_path):
    """lld's --why-extract file: each archive member, and the file whose reference extracted it."""
    included = {}
    with open(why_path, errors="replace") as f:
        next(f, None)
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 3:
                included.setdefault(parts[1], parts[0])
    return included


def icu_roots(why_path):
    """The program's own object files (not the Swift toolchain's archives) whose references make
    the linker take ICU's archive members: lld's --why-extract list, followed from each ICU member
    back to the first file outside the toolchain."""
    included = extracted_by(why_path)
    roots = defaultdict(int)
    for member in included:
        if "lib_FoundationICU.a" not in member:
            continue
        seen, by = set(), included[member]
        while "swift_static" in by and by in included and by not in seen:
            seen.add(by)
            by = included[by]
        if "swift_static" not in by:
            roots[re.sub(r"^.*/([^/]+)\.build/([^/]+)$", r"\1 (\2)", by)] += 1
    return sorted(roots.items(), key=lambda kv: -kv[1])


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: binary-sizes.py LINK.map LINK.why PROGRAM [--markdown]")
    map_path, why_path, program = sys.argv[1], sys.argv[2], sys.argv[3]
    with tempfile.NamedTemporaryFile() as stripped:
        subprocess.run(["strip", "--strip-unneeded", "--remove-section=.comment", "--remove-section=.note",
                        "-o", stripped.name, program], check=True)
        total = len(open(stripped.name, "rb").read())
    sizes = attribute(map_path, allocated_sections(program))
    rest = total - sum(sizes.values())
    rows = sorted(sizes.items(), key=lambda kv: -kv[1])
    rows.append(("the rest: headers, alignment between sections", rest))
    if "--markdown" in sys.argv:
        print("| library | MB | share |")
        print("|---|---:|---:|")
        for name, size in rows:
            print(f"| {name} | {size / 1e6:.1f} | {100 * size / total:.0f} % |")
        print(f"| **the stripped program** | **{total / 1e6:.1f}** | |")
        print()
        print("What brings ICU in: the program's object files whose references lead the linker, through")
        print("Foundation and CoreFoundation, to ICU's archive. The linker records only the first file that needed each")
        print("member, so removing these would show the next; ICU members reached through each:")
        print()
        print("| module (object file) | ICU members reached |")
        print("|---|---:|")
        for name, count in icu_roots(why_path):
            print(f"| {name} | {count} |")
    else:
        for name, size in rows:
            print(f"{size / 1e6:8.1f} MB  {100 * size / total:3.0f} %  {name}")
        print(f"{total / 1e6:8.1f} MB        the stripped program")


if __name__ == "__main__":
    main()
