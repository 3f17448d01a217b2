"""The Debian package (packaging/build-deb.sh, `make deb`): its contents, lintian, an installation
into a throw-away root with the real maintainer scripts, and the man pages.

`make deb` packages the release build (Swift runtime linked statically). A release build takes
minutes, so these tests package the debug build from the same script: the same files and
scripts, only larger binaries that find the Swift runtime through the toolchain's RUNPATH — the
one lintian error that is expected here, and only here (test_release_package_is_lintian_clean
checks the real one when ROOMBRIDGE_DEB_TEST=1).
"""
import gzip
import json
import os
import re
import shutil
import subprocess

import pytest

from conftest import BIN, ROOT, binary

LIBRARIES = ["libnfc6", "libdbus-1-3", "libbluetooth3", "libsqlite3-0"]
# Only in a package of the debug build: its binaries load the Swift runtime from the toolchain.
DEBUG_BUILD_TAGS = {"custom-library-search-path"}
# Generous "does not hang" bounds: building (strip, compress) and lintian take tens of seconds.
BUILD_TIMEOUT = 900
LINTIAN_TIMEOUT = 900


def run(args, **kw):
    kw.setdefault("timeout", 120)
    return subprocess.run(args, capture_output=True, text=True, **kw)


def build_package(bin_dir, out_dir, compression="gzip"):
    out = run([str(ROOT / "packaging" / "build-deb.sh"), str(bin_dir), str(out_dir)],
              env={**os.environ, "DEB_COMPRESSION": compression}, timeout=BUILD_TIMEOUT)
    assert out.returncode == 0, out.stdout + out.stderr
    path = out.stdout.strip().splitlines()[-1]
    assert os.path.exists(path), out.stdout
    return path


@pytest.fixture(scope="module")
def deb(tmp_path_factory):
    for tool in ("dpkg-deb", "dpkg-shlibdeps", "lintian"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is missing: apt-get install dpkg-dev lintian (scripts/install-deps.sh)")
    binary("roombridged"), binary("roombridgectl"), binary("roombridge-web")
    return build_package(BIN, tmp_path_factory.mktemp("deb"))


def version():
    return run([binary("roombridged"), "--version"]).stdout.split()[1]


def field(deb, name):
    return run(["dpkg-deb", "-f", deb, name]).stdout.strip()


def test_package_name_fields_and_dependencies(deb):
    arch = run(["dpkg", "--print-architecture"]).stdout.strip()
    assert os.path.basename(deb) == f"roombridge_{version()}_{arch}.deb"
    assert field(deb, "Package") == "roombridge" and field(deb, "Version") == version()
    depends = [d.split()[0] for d in field(deb, "Depends").split(", ")]
    for lib in LIBRARIES:
        assert lib in depends, depends
    assert "systemd" in depends
    assert not [d for d in depends if "swift" in d], depends


def test_package_contents(deb):
    listing = run(["dpkg-deb", "--contents", deb]).stdout
    files = {line.split()[-1].lstrip(".") for line in listing.splitlines()}
    for path in ["/usr/bin/roombridged", "/usr/bin/roombridgectl", "/usr/bin/roombridge-web",
                 "/lib/systemd/system/roombridged.service", "/lib/systemd/system/roombridged.socket",
                 "/lib/systemd/system/roombridge-web.service", "/usr/share/man/man1/roombridge-web.1.gz",
                 "/usr/lib/sysusers.d/roombridge.conf", "/usr/lib/tmpfiles.d/roombridge.conf",
                 "/lib/udev/rules.d/60-roombridge-nfc.rules", "/usr/share/dbus-1/system.d/roombridge.conf",
                 "/usr/share/bash-completion/completions/roombridgectl",
                 "/usr/share/man/man8/roombridged.8.gz", "/usr/share/man/man1/roombridgectl.1.gz",
                 "/etc/roombridge/roombridged.toml",
                 "/usr/share/doc/roombridge/copyright", "/usr/share/doc/roombridge/changelog.gz"]:
        assert path in files, path
    assert not [f for f in files if f.endswith(("pn532-sim", "bluez-sim"))], "simulators are not packaged"
    assert all(" root/root " in line for line in listing.splitlines()), "every file is root-owned"
    control = run(["dpkg-deb", "--info", deb, "conffiles"]).stdout
    assert control.split() == ["/etc/roombridge/roombridged.toml"]


def lintian_findings(deb):
    out = run(["lintian", "--tag-display-limit", "0", deb], timeout=LINTIAN_TIMEOUT)
    return [line for line in out.stdout.splitlines() if re.match(r"^[EW]: ", line)], out


def test_lintian_reports_no_errors_or_warnings(deb):
    findings, out = lintian_findings(deb)
    unexpected = [f for f in findings if f.split()[2] not in DEBUG_BUILD_TAGS]
    assert not unexpected, out.stdout + out.stderr


def dpkg_root(root, *args):
    # Maintainer scripts run outside a chroot with DPKG_ROOT set (the root has no shell of its
    # own); the root has no libraries either, so dependencies are not checked.
    return run(["dpkg", f"--root={root}", "--force-script-chrootless", "--force-depends",
                "--force-not-root", *args])


def make_root(path):
    for d in ("var/lib/dpkg/info", "var/lib/dpkg/updates"):
        (path / d).mkdir(parents=True)
    (path / "var/lib/dpkg/status").touch()
    return path


def users(root, name):
    return [line for line in (root / "etc" / name).read_text().splitlines() if line.startswith("roombridge:")] \
        if (root / "etc" / name).exists() else []


def test_installs_into_a_throwaway_root_and_purge_keeps_the_database(deb, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("installing with dpkg --root and systemd-sysusers --root needs root")
    root = make_root(tmp_path / "root")
    out = dpkg_root(root, "-i", deb)
    assert out.returncode == 0, out.stdout + out.stderr

    # The files landed, and the binaries start from there.
    for path in ["usr/bin/roombridged", "usr/bin/roombridgectl", "usr/bin/roombridge-web",
                 "lib/systemd/system/roombridge-web.service", "etc/roombridge/roombridged.toml",
                 "usr/share/man/man8/roombridged.8.gz"]:
        assert (root / path).exists(), path
    out = run([str(root / "usr/bin/roombridge-web"), "--help"])
    assert out.returncode == 0 and "kiosk" in out.stdout, out.stderr
    unit = (root / "lib/systemd/system/roombridge-web.service").read_text()
    assert "ExecStart=/usr/bin/roombridge-web " in unit and "@BINDIR@" not in unit
    out = run([str(root / "usr/bin/roombridged"), "--version"])
    assert out.returncode == 0 and out.stdout.strip() == f"roombridged {version()}", out.stderr
    out = run([str(root / "usr/bin/roombridged"), "--config", str(root / "etc/roombridge/roombridged.toml"),
               "--print-config"])
    assert out.returncode == 0 and 'path = "/var/lib/roombridge/roombridge.sqlite"' in out.stdout, out.stderr
    out = run([str(root / "usr/bin/roombridgectl"), "--version"])
    assert out.returncode == 0 and version() in out.stdout, out.stderr

    # postinst: the user (in dialout), the state directory, the enabled units.
    assert users(root, "passwd") and "/var/lib/roombridge" in users(root, "passwd")[0]
    dialout = [l for l in (root / "etc/group").read_text().splitlines() if l.startswith("dialout:")]
    assert dialout and "roombridge" in dialout[0].split(":")[3].split(",")
    state = root / "var/lib/roombridge"
    assert state.is_dir() and oct(state.stat().st_mode & 0o777) == "0o750"
    assert (root / "etc/systemd/system/sockets.target.wants/roombridged.socket").is_symlink()
    assert (root / "etc/systemd/system/multi-user.target.wants/roombridged.service").is_symlink()
    # The web front end is installed, not enabled: the administrator chooses it.
    assert not (root / "etc/systemd/system/multi-user.target.wants/roombridge-web.service").exists()

    # purge with a database: the database and its owner stay, and the script says so.
    (state / "roombridge.sqlite").write_bytes(b"SQLite format 3\0")
    out = dpkg_root(root, "--purge", "roombridge")
    assert out.returncode == 0, out.stdout + out.stderr
    assert (state / "roombridge.sqlite").exists(), "purge deleted the lending database"
    assert "kept" in out.stderr and "/var/lib/roombridge" in out.stderr
    assert users(root, "passwd"), "the database's owner was removed"
    for gone in ["usr/bin/roombridged", "etc/roombridge/roombridged.toml", "etc/roombridge",
                 "etc/systemd/system/sockets.target.wants/roombridged.socket", "run/roombridge"]:
        assert not (root / gone).exists(), gone


def test_purge_without_data_removes_everything_install_added(deb, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("installing with dpkg --root and systemd-sysusers --root needs root")
    root = make_root(tmp_path / "root")
    assert dpkg_root(root, "-i", deb).returncode == 0
    out = dpkg_root(root, "--purge", "roombridge")
    assert out.returncode == 0, out.stdout + out.stderr
    assert not (root / "var/lib/roombridge").exists() and not (root / "etc/roombridge").exists()
    assert not users(root, "passwd") and not users(root, "group")
    leftovers = [p for p in root.rglob("*") if "roombridge" in p.name and "var/lib/dpkg" not in str(p)]
    assert not leftovers, leftovers


def test_remove_keeps_the_configuration_and_reinstalling_restores_the_units(deb, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("installing with dpkg --root and systemd-sysusers --root needs root")
    root = make_root(tmp_path / "root")
    assert dpkg_root(root, "-i", deb).returncode == 0
    config = root / "etc/roombridge/roombridged.toml"
    config.write_text(config.read_text() + "\n# edited by the administrator\n")
    out = dpkg_root(root, "--remove", "roombridge")
    assert out.returncode == 0, out.stdout + out.stderr
    assert not (root / "usr/bin/roombridged").exists()
    assert "edited by the administrator" in config.read_text(), "remove must keep the configuration"
    assert users(root, "passwd"), "remove must keep the service user"

    out = dpkg_root(root, "-i", "--force-confold", deb)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "edited by the administrator" in config.read_text()
    socket_unit = root / "etc/systemd/system/roombridged.socket"
    assert not socket_unit.exists() and not socket_unit.is_symlink(), "the unit is still masked"
    assert (root / "etc/systemd/system/sockets.target.wants/roombridged.socket").is_symlink()


# --- man pages -----------------------------------------------------------------------------------

def page(deb, tmp_path, name):
    out = run(["dpkg-deb", "-x", deb, str(tmp_path / "x")])
    assert out.returncode == 0, out.stderr
    path = next((tmp_path / "x" / "usr/share/man").rglob(f"{name}.*.gz"))
    return path, gzip.decompress(path.read_bytes()).decode()


def test_man_pages_render_without_warnings(deb, tmp_path):
    for name in ("roombridged", "roombridgectl", "roombridge-web"):
        path, _ = page(deb, tmp_path, name)
        out = run(["man", "--warnings=w", "-l", str(path)], env={**os.environ, "MANWIDTH": "80"})
        assert out.returncode == 0 and not out.stderr.strip(), f"{name}: {out.stderr}"
        assert "NAME" in out.stdout and "SYNOPSIS" in out.stdout


def test_roombridged_page_lists_exactly_the_flags_of_roombridged_help():
    """roombridged.8 is written by hand; this keeps it in step with the daemon's flags."""
    text = (ROOT / "packaging/man/roombridged.8").read_text()
    in_page = {f.replace("\\-", "-") for f in re.findall(r"\\-\\-((?:[a-z0-9]|\\-)+)", text)}
    help_text = run([binary("roombridged"), "--help"]).stdout
    # --no-KEY (for each boolean key) is described once, generically.
    in_help = {f for f in re.findall(r"--([a-z][a-z0-9-]*)", help_text) if not f.startswith("no-")}
    assert in_help - in_page == set(), f"flags missing from packaging/man/roombridged.8: {in_help - in_page}"
    # --no-KEY and --key are described generically; everything else must be a real flag.
    stray = {f for f in in_page - in_help if f not in ("no-", "key")}
    assert not stray, f"packaging/man/roombridged.8 describes flags roombridged does not have: {stray}"


def test_roombridgectl_page_has_every_command_and_option(deb, tmp_path):
    """roombridgectl.1 is generated from the ArgumentParser definitions; check it lost nothing."""
    _, text = page(deb, tmp_path, "roombridgectl")
    info = json.loads(run([binary("roombridgectl"), "--experimental-dump-help"]).stdout)

    def walk(cmd, path):
        subs = [s for s in cmd.get("subcommands", []) if s["commandName"] != "help"]
        for s in subs:
            yield from walk(s, path + [s["commandName"]])
        if not subs:
            yield path, cmd

    for path, cmd in walk(info["command"], []):
        assert f'.SS "{" ".join(path)}"'.replace("-", "\\-") in text, path
        for arg in cmd.get("arguments", []):
            for name in arg.get("names", []):
                if name["kind"] == "long" and arg.get("shouldDisplay", True):
                    assert "\\-\\-" + name["name"].replace("-", "\\-") in text, (path, name["name"])


# --- the release package -------------------------------------------------------------------------

@pytest.mark.skipif(os.environ.get("ROOMBRIDGE_DEB_TEST") != "1",
                    reason="builds the release binaries (minutes); set ROOMBRIDGE_DEB_TEST=1")
def test_release_package_is_lintian_clean():
    out = run(["make", "deb"], cwd=ROOT, timeout=3600)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-4000:]
    deb = out.stdout.strip().splitlines()[-1]
    findings, lint = lintian_findings(deb)
    assert not findings, lint.stdout
    depends = [d.split()[0] for d in field(deb, "Depends").split(", ")]
    assert set(LIBRARIES) <= set(depends) and not [d for d in depends if "swift" in d], depends
