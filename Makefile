# a2ad developer commands. Everything installs its own prerequisites via scripts/bootstrap.sh.
#
#   make cli        build (release) the a2ad server and the a2a client, nothing else
#   make run        build (release) and serve on http://127.0.0.1:8080
#   make package    the Debian package (binaries, systemd unit, config, workflows)
#   make test       build (release) and run every test (unit, integration, interop), then
#                   every fuzz target briefly (fuzz-smoke)
#   make sanitize   build with ASan+UBSan and run every test
#   make tsan       build with ThreadSanitizer and run every test
#   make fuzz       fuzz every target FUZZ_SECONDS (600) each; FUZZ_TARGETS="a_fuzz b_fuzz"
#   make format     clang-format src/ tests/ bench/ in place; make format-check only checks
#   make lint       clang-tidy over src/ with the checks of .clang-tidy (not part of make test)
#   make clean      remove build/

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

JOBS ?= 2
# Tests run at once by `make test`. Most of a test's time is spent waiting (on servers it
# started, timers, PostgreSQL), not computing: at 2 the suite kept two cores about 37% busy;
# at 4 it takes a third less time (measured on two cores).
TEST_JOBS ?= 4
LISTEN ?= 127.0.0.1:8080
DATA_DIR ?= ./data
WORKFLOWS_DIR ?= ./workflows
A2AD_RELEASE := build/release/src/a2ad/cli/a2ad

FORMAT_FILES = $(shell find src tests bench -path '*/node_modules' -prune -o \
                 -type f \( -name '*.cpp' -o -name '*.hpp' \) -print 2>/dev/null)

# libFuzzer targets (tests/fuzz/README.md), built by the fuzz preset (clang, ASan+UBSan).
FUZZ_SECONDS ?= 600
FUZZ_SMOKE_SECONDS ?= 12
FUZZ_TARGETS ?= $(sort $(basename $(notdir $(wildcard tests/fuzz/*_fuzz.cpp))))

.PHONY: help bootstrap cli run build debug test interop sanitize tsan bench format format-check clean package lint \
        fuzz fuzz-build fuzz-smoke

help:
	@sed -n '3,14p' Makefile | sed 's/^#//'

bootstrap:
	@bash scripts/bootstrap.sh

# build/<preset>/build.ninja marks a configured tree; later builds re-run CMake by themselves
# when a CMakeLists.txt changes.
build/%/build.ninja: CMakePresets.json
	cmake --preset $*
	touch $@

build: bootstrap build/release/build.ninja
	cmake --build --preset release -j$(JOBS)

debug: bootstrap build/debug/build.ninja
	cmake --build --preset debug -j$(JOBS)

cli: bootstrap build/release/build.ninja
	cmake --build --preset release -j$(JOBS) --target a2ad a2a

# Builds only what it serves and the CLI (the a2ad and a2a executables), not the tests and
# benchmarks.
run: bootstrap build/release/build.ninja
	cmake --build --preset release -j$(JOBS) --target a2ad a2a
	mkdir -p $(DATA_DIR)
	exec $(A2AD_RELEASE) serve --listen $(LISTEN) --data-dir $(DATA_DIR) --workflows-dir $(WORKFLOWS_DIR)

# The Debian package of the release build (packaging/): build/release/a2ad_<version>_<arch>.deb.
package: bootstrap build/release/build.ninja
	cmake --build --preset release -j$(JOBS) --target a2ad a2a
	cd build/release && cpack -G DEB

# The servers the tests start log into build/release/test-logs; afterwards no credential may
# be found there (scripts/scan_test_logs.sh).
test: build
	rm -rf build/release/test-logs && mkdir -p build/release/test-logs
	A2AD_TEST_LOG_DIR=$(CURDIR)/build/release/test-logs ctest --preset release -j$(TEST_JOBS)
	scripts/scan_test_logs.sh build/release/test-logs
	$(MAKE) --no-print-directory fuzz-smoke

# clang-tidy with the checks of .clang-tidy over every source file of src/, on the release build's
# compile_commands.json (about 30 minutes on two cores, so not part of `make test`; the source
# rules that are quick run in ctest as lint.*). A finding fails it.
lint: build
	run-clang-tidy -j$(JOBS) -p build/release -quiet -extra-arg=-Wno-unknown-warning-option \
	  '^$(CURDIR)/src/.*\.cpp$$'

# Only the SDK interop tests (tests/interop), against the release build.
interop: build
	ctest --preset release -j$(JOBS) -R '^interop\.'

sanitize: bootstrap build/sanitize/build.ninja
	cmake --build --preset sanitize -j$(JOBS)
	ctest --preset sanitize -j$(JOBS)

tsan: bootstrap build/tsan/build.ninja
	cmake --build --preset tsan -j$(JOBS)
	ctest --preset tsan -j$(JOBS)

fuzz-build: bootstrap build/fuzz/build.ninja
	cmake --build --preset fuzz -j$(JOBS)

# Every target FUZZ_SECONDS; what they find that is new is merged into build/fuzz/corpus.
fuzz: fuzz-build
	JOBS=$(JOBS) bash scripts/fuzz.sh run $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# Every target FUZZ_SMOKE_SECONDS from its seeds (part of make test; nothing is kept).
fuzz-smoke: fuzz-build
	JOBS=$(JOBS) bash scripts/fuzz.sh smoke $(FUZZ_SMOKE_SECONDS) $(FUZZ_TARGETS)

CHECK_CLANG_FORMAT = command -v clang-format >/dev/null || \
  { echo "clang-format not found: apt-get install clang-format" >&2; exit 1; }

format:
	@$(CHECK_CLANG_FORMAT)
	$(if $(FORMAT_FILES),clang-format -i $(FORMAT_FILES),@echo "no C++ files to format")

format-check:
	@$(CHECK_CLANG_FORMAT)
	$(if $(FORMAT_FILES),clang-format --dry-run --Werror $(FORMAT_FILES),@echo "no C++ files to check")

clean:
	rm -rf build

# Benchmarks (never part of `make test`), results in bench/RESULTS.md: a2ad side by side with
# @a2a-js/sdk 1.x and 0.3.x servers and a bare Beast ceiling, and restart time with 100k/1M
# stored tasks (~25 min). QUICK=1 make bench: a ~3 min pass. The SSE fan-out:
# SCENARIOS="send get stream restart fanout" make bench, or bash bench/run_fanout.sh.
bench: bootstrap build/release/build.ninja
	bash bench/run_bench.sh
