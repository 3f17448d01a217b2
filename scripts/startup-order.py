#!/usr/bin/env python3
"""Writes the shipped program's startup order (docs/architecture.md, "Startup order"):

    sudo scripts/startup-order.py PROGRAM OUTPUT.xz [--runs N]

PROGRAM is the release program as `make deb` builds it (.build/release/roombridge: unstripped, every function in
a section of its own). The script starts it as roombridged (logging at its default level, as installed), idle
with no hardware, N times in each of two configurations (as the benchmark starts it: reader and curtain off; and
the defaults: reader and curtain on, none present), each time from a cold page cache with read-ahead off, so
that the pages of the program mapped at idle are the pages its code ran in. The names of the functions in those
pages (the union of every run), in address order, go to OUTPUT.xz; the Makefile links the release program with
them first (lld's --symbol-ordering-file).

Root only: it drops the page cache and sets read-ahead to 0 on the program's block device for the runs (restored
afterwards, also on failure). The order is a layout hint: a function it names that no longer exists is ignored,
and one it misses is laid out after the others, so a stale order costs memory, never correctness.
"""
import argparse
import lzma
import os
import re
import socket
import struct
import subprocess
import sys
import tempfile
import time

CONFIGURATIONS = {
    "no hardware configured (as the benchmark)": ["--no-nfc-enabled", "--no-curtain-enabled"],
    "the defaults, no hardware present": [],
}
SETTLE_SECONDS = 2  # after READY=1, as the benchmark waits before it reads idle memory


def read_ahead_file(path):
    """The read_ahead_kb file of the block device holding path (the disk's, for a partition)."""
    st = os.stat(path)
    dev = os.path.realpath(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
    for d in (dev, os.path.dirname(dev)):
        f = os.path.join(d, "queue", "read_ahead_kb")
        if os.path.exists(f):
            return f
    sys.exit(f"startup-order: no read_ahead_kb for the device of {path}; run it on a file on a block device")


def load_segments(program):
    """(file offset, virtual address, file size) of each PT_LOAD."""
    out = subprocess.run(["readelf", "-lW", program], capture_output=True, text=True, check=True).stdout
    return [tuple(int(x, 16) for x in m.groups())
            for m in re.finditer(r"^\s*LOAD\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+\S+\s+(0x[0-9a-f]+)", out, re.M)]


def mapped_code_pages(pid, program, segments):
    """Virtual addresses (as in the ELF file) of the program's executable pages present in pid's page tables."""
    real = os.path.realpath(program)
    pages = set()
    with open(f"/proc/{pid}/pagemap", "rb") as pagemap:
        for line in open(f"/proc/{pid}/maps"):
            f = line.split()
            if len(f) < 6 or "x" not in f[1] or os.path.realpath(f[5]) != real:
                continue
            lo, hi = (int(x, 16) for x in f[0].split("-"))
            offset = int(f[2], 16)
            base = None
            for (fo, va, size) in segments:  # the last LOAD that starts at or before offset (two may share a page)
                if (fo & ~0xfff) <= offset < fo + max(size, 1):
                    base = (va & ~0xfff) + (offset - (fo & ~0xfff))
            if base is None:
                continue
            count = (hi - lo) // 4096
            pagemap.seek(lo // 4096 * 8)
            entries = pagemap.read(count * 8)
            for i in range(count):
                if struct.unpack_from("<Q", entries, i * 8)[0] >> 63 & 1:  # bit 63: present
                    pages.add(base + i * 4096)
    return pages


def one_run(program, arguments, segments, ra_file):
    with tempfile.TemporaryDirectory(prefix="startup-order.") as d:
        os.symlink(os.path.realpath(program), os.path.join(d, "roombridged"))
        open(os.path.join(d, "roombridged.toml"), "w").close()
        notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        notify.bind(os.path.join(d, "notify.sock"))
        notify.settimeout(20)
        subprocess.run(["sync"], check=True)
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        with open(ra_file, "w") as f:
            f.write("0\n")
        env = dict(os.environ, NOTIFY_SOCKET=os.path.join(d, "notify.sock"), LIBNFC_LOG_LEVEL="0")
        proc = subprocess.Popen([os.path.join(d, "roombridged"), "--config", os.path.join(d, "roombridged.toml"),
                                 "--socket-path", os.path.join(d, "roombridge.sock"), "--socket-group", "",
                                 "--database-path", os.path.join(d, "db.sqlite")] + arguments,
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            try:
                while b"READY=1" not in notify.recv(4096):
                    pass
            except socket.timeout:
                status = "still running" if proc.poll() is None else f"exited with {proc.returncode}"
                sys.exit(f"startup-order: {program} sent no READY=1 within 20 s ({status}); run it by hand with "
                         f"the same arguments to see why: {' '.join(arguments) or '(no arguments)'}")
            time.sleep(SETTLE_SECONDS)
            return mapped_code_pages(proc.pid, program, segments)
        finally:
            proc.terminate()
            proc.wait()
            notify.close()


def function_names(program, pages):
    """The names of the functions overlapping the pages, in address order."""
    out = subprocess.run(["nm", "-n", "-S", "--defined-only", program], capture_output=True, text=True, check=True).stdout
    names, seen = [], set()
    for line in out.splitlines():
        f = line.split(None, 3)
        if len(f) == 3:  # no size (a label of assembly): its own page
            f = [f[0], "1", f[1], f[2]]
        if len(f) != 4 or f[2] not in "tTwW":
            continue
        start, size, name = int(f[0], 16), int(f[1], 16), f[3]
        first, last = start & ~0xfff, (start + max(size, 1) - 1) & ~0xfff
        if name not in seen and any(p in pages for p in range(first, last + 1, 4096)):
            seen.add(name)
            names.append(name)
    return names


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("program")
    parser.add_argument("output")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("startup-order: run as root (it drops the page cache and sets the device's read-ahead): "
                 "sudo scripts/startup-order.py ...")
    if not os.path.isfile(args.program):
        sys.exit(f"startup-order: no program {args.program}; build it first (make deb)")
    segments = load_segments(args.program)
    ra_file = read_ahead_file(args.program)
    saved = open(ra_file).read().strip()
    pages = set()
    try:
        for name, arguments in CONFIGURATIONS.items():
            for i in range(args.runs):
                run = one_run(args.program, arguments, segments, ra_file)
                print(f"startup-order: {name}, run {i + 1}: {len(run)} pages of code", file=sys.stderr)
                pages |= run
    finally:
        with open(ra_file, "w") as f:
            f.write(saved + "\n")
    names = function_names(args.program, pages)
    with lzma.open(args.output, "wt", preset=9) as f:
        f.write("\n".join(names) + "\n")
    print(f"startup-order: {len(pages)} pages of code, {len(names)} functions -> {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
