# RoomBridge — build, test, run, install.
SWIFT      ?= swift
PYTHON     ?= python3
PREFIX     ?= /usr/local
DESTDIR    ?=
BUILD_DIR  := .build/debug

.PHONY: all build test unit-tests integration-tests run deps clean

all: build

deps:
	scripts/install-deps.sh

build:
	$(SWIFT) build --build-tests

# The one test command (README, CI): one debug build serves the Swift unit tests and the
# integration tests, which drive the real binaries through the real C libraries.
test: deps build unit-tests integration-tests

unit-tests:
	$(SWIFT) test --skip-build

integration-tests:
	ROOMBRIDGE_BIN=$(abspath $(BUILD_DIR)) $(PYTHON) -m pytest -q -p no:cacheprovider Tests/Integration

# Sets everything up and runs the system on this machine (simulators when no hardware is present).
run: deps build
	scripts/run.sh

clean:
	rm -rf .build
