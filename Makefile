# RoomBridge — build, test, run, install.
SWIFT      ?= swift
PYTHON     ?= python3
PREFIX     ?= /usr/local
DESTDIR    ?=
BUILD_DIR  := .build/debug
# Extra flags for the release builds (release, deb), e.g. JOBS: `make deb RELEASE_FLAGS=-j1` on a Pi.
RELEASE_FLAGS ?=
# How the shipped program is linked (docs/architecture.md, "One program"): by lld (in the Swift toolchain on
# amd64 and arm64) with the relative relocations packed (DT_RELR, glibc 2.36 and later: Debian 12, Raspberry
# Pi OS bookworm), which gold, the toolchain's default, cannot do; and with no symbol of its own in the dynamic
# symbol table (scripts/local-symbols.map): packaging/build-deb.sh puts the names for backtraces in a
# package of their own, roombridge-dbgsym, instead.
#
# And laid out for a small idle footprint (docs/architecture.md, "Startup order"): every function in a section of
# its own, and the functions the daemon runs from start to idle placed first, in the order
# packaging/startup-order.xz names them (written by scripts/startup-order.py), so they fill few pages: the
# kernel maps a program's code 64 KiB around each page it runs, so scattered functions keep most of the code
# resident. A name the order lists that no longer exists is ignored (hence no warning for it).
STARTUP_ORDER := $(CURDIR)/.build/startup.order
RELEASE_LINK  := -Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs \
                 -Xlinker --version-script=$(CURDIR)/scripts/local-symbols.map \
                 -Xswiftc -Xfrontend -Xswiftc -function-sections -Xcc -ffunction-sections -Xcxx -ffunction-sections \
                 -Xlinker --symbol-ordering-file=$(STARTUP_ORDER) -Xlinker --no-warn-symbol-ordering
# And ICU's data cut to what the program uses (English and Japanese; scripts/icu-data.py): 7 MB of ICU's 34.
# Expanded only by the rules that link statically; the script fails loudly rather than ship the whole data.
ICU_LINK = $(or $(shell SWIFT=$(SWIFT) $(PYTHON) scripts/icu-data.py $(CURDIR)/.build/icu-data),$(error scripts/icu-data.py failed))
RELEASE_BUILD  = $(SWIFT) build -c release --static-swift-stdlib $(RELEASE_LINK) $(ICU_LINK) $(RELEASE_FLAGS)

.PHONY: all build test unit-tests integration-tests integration-tests-postgresql scenario fuzz run deps clean release install uninstall bench deb

all: build

deps:
	scripts/install-deps.sh

# Every `import` must name a dependency the target declares in Package.swift (transitive ones do not count).
build:
	$(SWIFT) build --build-tests --explicit-target-dependency-import-check=error

# The one test command (README, CI): one debug build serves the Swift unit tests and the
# integration tests, which drive the real binaries through the real C libraries. A private
# PostgreSQL server (scripts/pg-test-server.sh) runs for the suites' PostgreSQL cases and is
# stopped afterwards, also when a suite fails.
test: deps build
	@set -e; pgdir=$$(mktemp -d /tmp/roombridge-pg-test.XXXXXX); \
	trap 'scripts/pg-test-server.sh stop '"$$pgdir"'; rm -rf '"$$pgdir" EXIT; \
	url=$$(scripts/pg-test-server.sh start "$$pgdir"); echo "PostgreSQL test server: $$url"; \
	ROOMBRIDGE_PG_URL="$$url" ROOMBRIDGE_PG_PASSWORD_FILE="$$pgdir/password" ROOMBRIDGE_REQUIRE_PG=1 \
	  $(MAKE) --no-print-directory unit-tests integration-tests integration-tests-postgresql scenario fuzz

unit-tests:
	$(SWIFT) test --skip-build

integration-tests:
	ROOMBRIDGE_BIN=$(abspath $(BUILD_DIR)) $(PYTHON) -m pytest -q -p no:cacheprovider Tests/Integration

# The lending (with import), outbox, booking and stocktake tests again, each daemon on a PostgreSQL database of its own
# (needs ROOMBRIDGE_PG_URL, as make test sets it); tests marked sqlite_only are left out.
integration-tests-postgresql:
	ROOMBRIDGE_IT_BACKEND=postgresql ROOMBRIDGE_BIN=$(abspath $(BUILD_DIR)) $(PYTHON) -m pytest -q -p no:cacheprovider \
	  Tests/Integration/test_lending.py Tests/Integration/test_outbox.py Tests/Integration/test_bookings.py \
	  Tests/Integration/test_stocktake.py

# The scripted tour of make run, on the simulators, checked step by step.
scenario:
	ROOMBRIDGE_FORCE_SIMULATORS=1 ROOMBRIDGE_BIN=$(abspath $(BUILD_DIR)) scripts/run.sh --scenario

# Every benchmark figure in one invocation (release build); writes docs/benchmarks.md.
# The package's size too (scripts/package-size.sh: a static release build of its own, in .build-static).
bench: $(STARTUP_ORDER)
	$(SWIFT) build -c release
	SWIFT=$(SWIFT) RELEASE_LINK="$(RELEASE_LINK)" ICU_LINK="$(ICU_LINK)" scripts/package-size.sh .build/package-size
	.build/release/roombridge-bench --bin .build/release --package .build/package-size --output docs/benchmarks.md

# A bounded libFuzzer run (AddressSanitizer) over the NDEF decoders; FUZZ_SECONDS=600 for longer.
FUZZ_SECONDS ?= 60
fuzz:
	scripts/fuzz-ndef.sh $(FUZZ_SECONDS)

# Sets everything up and runs the system on this machine (simulators when no hardware is present).
run: deps build
	scripts/run.sh $(ARGS)

# A release build that needs no Swift runtime on the target (only Debian's runtime libraries).
# `roombridge` is roombridged, roombridgectl and roombridge-web in one program (see install).
release: $(STARTUP_ORDER)
	$(RELEASE_BUILD) --product roombridge
	$(RELEASE_BUILD) --product pn532-sim
	$(RELEASE_BUILD) --product bluez-sim

# make deb: roombridge_VERSION_ARCH.deb in this directory, from a release build of the one program
# (Swift runtime linked statically; Depends: only Debian's libraries). See packaging/build-deb.sh.
deb: $(STARTUP_ORDER)
	$(RELEASE_BUILD) --product roombridge
	packaging/build-deb.sh .build/release .

# A new order takes effect at the next link: SwiftPM sees the same flags and would keep the programs it linked
# with the old one, so they go (those of make release and deb in .build, and package-size.sh's in .build-static).
ORDERED_PROGRAMS := roombridge roombridged roombridgectl roombridge-web pn532-sim bluez-sim idle-peer-essentials idle-peer-foundation
$(STARTUP_ORDER): packaging/startup-order.xz
	mkdir -p $(@D)
	xz -dc $< > $@
	rm -f $(foreach p,$(ORDERED_PROGRAMS),.build/release/$(p) .build-static/release/$(p))

BINDIR      = $(PREFIX)/bin
SYSTEMDDIR ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR?= $(PREFIX)/lib/sysusers.d
TMPFILESDIR?= $(PREFIX)/lib/tmpfiles.d
UDEVDIR    ?= $(PREFIX)/lib/udev/rules.d
# dbus-daemon reads policies only from /usr/share/dbus-1/system.d (packages) and /etc/dbus-1/system.d
# (the administrator) — see <includedir> in /usr/share/dbus-1/system.conf — never from /usr/local.
# systemd, sysusers, tmpfiles and udev do read /usr/local/lib/….
DBUSDIR    ?= $(if $(filter /usr,$(PREFIX)),/usr/share/dbus-1/system.d,/etc/dbus-1/system.d)
DOCDIR     ?= $(PREFIX)/share/doc/roombridge
BASHCOMPDIR?= $(PREFIX)/share/bash-completion/completions
RELEASE_BIN?= .build/release

# make install [PREFIX=/usr/local] [DESTDIR=…]: binaries, units, rules, policy, example config, docs.
# Run `make release` first (as a normal user); install itself does not build.
# The three programs are one file: the multi-call `roombridge`, installed as roombridged, with
# roombridgectl and roombridge-web as links to it (it runs as the name it was started by).
install:
	@test -x $(RELEASE_BIN)/roombridge || { echo "run 'make release' first"; exit 1; }
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SYSTEMDDIR) $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(TMPFILESDIR) \
	  $(DESTDIR)$(UDEVDIR) $(DESTDIR)$(DBUSDIR) $(DESTDIR)$(DOCDIR) $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)/etc/roombridge
	rm -f $(DESTDIR)$(BINDIR)/roombridged $(DESTDIR)$(BINDIR)/roombridgectl $(DESTDIR)$(BINDIR)/roombridge-web
	install -m 0755 $(RELEASE_BIN)/roombridge $(DESTDIR)$(BINDIR)/roombridged
	ln -s roombridged $(DESTDIR)$(BINDIR)/roombridgectl
	ln -s roombridged $(DESTDIR)$(BINDIR)/roombridge-web
	for b in pn532-sim bluez-sim; do [ ! -x $(RELEASE_BIN)/$$b ] || install -m 0755 $(RELEASE_BIN)/$$b $(DESTDIR)$(BINDIR)/; done
	sed 's|@BINDIR@|$(BINDIR)|g' systemd/roombridged.service.in > $(DESTDIR)$(SYSTEMDDIR)/roombridged.service
	sed 's|@BINDIR@|$(BINDIR)|g' systemd/roombridge-web.service.in > $(DESTDIR)$(SYSTEMDDIR)/roombridge-web.service
	chmod 0644 $(DESTDIR)$(SYSTEMDDIR)/roombridged.service $(DESTDIR)$(SYSTEMDDIR)/roombridge-web.service
	install -m 0644 systemd/roombridged.socket $(DESTDIR)$(SYSTEMDDIR)/
	install -m 0644 systemd/roombridge.sysusers.conf $(DESTDIR)$(SYSUSERSDIR)/roombridge.conf
	install -m 0644 systemd/roombridge.tmpfiles.conf $(DESTDIR)$(TMPFILESDIR)/roombridge.conf
	install -m 0644 udev/60-roombridge-nfc.rules $(DESTDIR)$(UDEVDIR)/
	install -m 0644 udev/61-roombridge-pn532-serial.rules.example udev/roombridge-blacklist-pn533.conf $(DESTDIR)$(DOCDIR)/
	install -m 0644 dbus/roombridge.conf $(DESTDIR)$(DBUSDIR)/
	[ -e $(DESTDIR)/etc/roombridge/roombridged.toml ] || install -m 0644 systemd/roombridged.toml.example $(DESTDIR)/etc/roombridge/roombridged.toml
	install -m 0644 systemd/roombridged.toml.example README.md docs/*.md $(DESTDIR)$(DOCDIR)/
	$(RELEASE_BIN)/roombridge roombridgectl --generate-completion-script bash > $(DESTDIR)$(BASHCOMPDIR)/roombridgectl

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/roombridged $(DESTDIR)$(BINDIR)/roombridgectl $(DESTDIR)$(BINDIR)/roombridge-web \
	  $(DESTDIR)$(BINDIR)/pn532-sim $(DESTDIR)$(BINDIR)/bluez-sim
	rm -f $(DESTDIR)$(SYSTEMDDIR)/roombridged.service $(DESTDIR)$(SYSTEMDDIR)/roombridged.socket \
	  $(DESTDIR)$(SYSTEMDDIR)/roombridge-web.service
	rm -f $(DESTDIR)$(SYSUSERSDIR)/roombridge.conf $(DESTDIR)$(TMPFILESDIR)/roombridge.conf
	rm -f $(DESTDIR)$(UDEVDIR)/60-roombridge-nfc.rules $(DESTDIR)$(DBUSDIR)/roombridge.conf
	rm -f $(DESTDIR)$(BASHCOMPDIR)/roombridgectl
	rm -rf $(DESTDIR)$(DOCDIR)
	@echo "left /etc/roombridge and /var/lib/roombridge (configuration and data) in place"

clean:
	rm -rf .build
