# moat: top-level build.
#
# Everything under lib/ prot/ sentry/ platform/ gofer/ policy/ netstack/ broker/ cli/
# is compiled into ONE binary, build/moat (cli/main.c holds main()); the
# internal roles (boot, gofer) are the same binary re-executed.
#
#   make            build/moat
#   make deps       install the Debian packages the build, tests and bench need
#   make test       format-check, docs-check, unit (+ ASan/UBSan), fuzz smoke, e2e,
#                   CPython's regression tests inside the sandbox
#   make demo       untrusted Python and a shell pipeline inside the sandbox
#   make bench      syscall micro-benchmarks: native / moat / runsc / proot,
#                   then TCP throughput and connect latency (bench/net.sh),
#                   then HTTPS through moat's credential broker (bench/https.sh)
#   make fuzz       every libFuzzer target for FUZZ_SECONDS each
#
# V=1 shows full command lines.  docs/building.md describes every target.

.DEFAULT_GOAL := all
SHELL := /bin/bash

BUILD  ?= build
NPROC  := $(shell nproc 2>/dev/null || echo 2)
FUZZ_SECONDS ?= 60

ifeq ($(origin CC),default)
CC     := gcc
endif
CLANG  ?= clang
CLANG_FORMAT ?= clang-format
PKG_CONFIG ?= pkg-config

# Library flags come from pkg-config where the library ships a .pc file.
# Recursively expanded on purpose: `make deps` must parse this file before
# pkg-config or the -dev packages exist.  json-c (policy) and liburing are
# linked --as-needed: they cost nothing until some file uses them.
PKGS        = libseccomp libcap libunwind json-c liburing libssl libcrypto libnghttp2 \
	zlib libbrotlienc libbrotlidec libzstd
# lwIP's headers are third-party: -isystem keeps our -Werror off them.
PKG_CFLAGS  = $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null) -isystem /usr/include/lwip
PKG_LIBS    = $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null || \
		echo -lseccomp -lcap -lunwind -ljson-c -luring -lssl -lcrypto -lnghttp2 \
		-lz -lbrotlienc -lbrotlidec -lzstd) -llwip -lslirp
CRIT_CFLAGS = $(shell $(PKG_CONFIG) --cflags criterion 2>/dev/null)
CRIT_LIBS   = $(shell $(PKG_CONFIG) --libs criterion 2>/dev/null || echo -lcriterion)

# CFLAGS/CPPFLAGS/LDFLAGS given on the command line are appended, never
# replace the project's flags.
WARNINGS  := -Wall -Wextra -Werror -Wswitch-enum -Wmissing-prototypes -Wformat=2
OPT       ?= -O2 -g
M_CPPFLAGS = -D_GNU_SOURCE -I. $(PKG_CFLAGS) $(CPPFLAGS)
M_CFLAGS   = -std=gnu11 $(OPT) $(WARNINGS) $(CFLAGS)
DEPFLAGS   = -MMD -MP
M_LDLIBS   = -Wl,--as-needed $(PKG_LIBS) -lunwind-x86_64 -lpthread $(LDLIBS)

# The ASan/UBSan build: same sources, own object dir.  -O1 keeps stack traces
# readable and avoids the false -Wmaybe-uninitialized that -O2 plus
# instrumentation produces with gcc.
SAN_FLAGS   := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
ASAN_CFLAGS  = -std=gnu11 -O1 -g $(SAN_FLAGS) $(WARNINGS) $(CFLAGS)

# The fuzz build: clang, libFuzzer.  gcc (above) is the warnings gate; clang
# shows its warnings here without failing, so a clang-only diagnostic cannot
# block the fuzzers.
FUZZ_CFLAGS := -std=gnu11 -O1 -g -Wall -Wextra -Wno-missing-field-initializers \
	-fno-omit-frame-pointer
FUZZ_SAN    := address,undefined

# Sanitizer behaviour for every instrumented run (unit-asan, fuzz).
export UBSAN_OPTIONS ?= halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS  ?= detect_leaks=1:abort_on_error=0:strict_string_checks=1

ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-6s %s\n' $(1) $(2)
endif

# ---------------------------------------------------------------- sources

SRC_DIRS  := lib prot sentry platform gofer policy netstack broker oci cli
SRCS      := $(sort $(foreach d,$(SRC_DIRS),$(wildcard $(d)/*.c)))
MAIN_SRC  := cli/main.c
LIB_SRCS  := $(filter-out $(MAIN_SRC),$(SRCS))

OBJS      := $(patsubst %.c,$(BUILD)/obj/%.o,$(SRCS))
LIB_OBJS  := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRCS))
ASAN_LIB_OBJS := $(patsubst %.c,$(BUILD)/asan/obj/%.o,$(LIB_SRCS))
FUZZ_LIB_OBJS := $(patsubst %.c,$(BUILD)/fuzz/obj/%.o,$(LIB_SRCS))

# Unit suites: tests/unit/<module>/*.c -> build/tests/unit-<module>
UNIT_MODULES := $(sort $(patsubst tests/unit/%/,%,$(dir $(wildcard tests/unit/*/*.c))))
UNIT_BINS    := $(addprefix $(BUILD)/tests/unit-,$(UNIT_MODULES))
ASAN_UNIT_BINS := $(addprefix $(BUILD)/asan/tests/unit-,$(UNIT_MODULES))
unit_srcs = $(wildcard tests/unit/$(1)/*.c)

# Fuzzers: tests/fuzz/fuzz_<name>.c -> build/fuzz/fuzz_<name>
FUZZ_SRCS := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRCS))
FUZZ_NAMES := $(patsubst tests/fuzz/fuzz_%.c,%,$(FUZZ_SRCS))

# Everything clang-format checks: our C, not vendored code.
FORMAT_FILES = $(sort $(foreach d,$(SRC_DIRS),$(wildcard $(d)/*.[ch])) \
	$(wildcard tests/unit/*/*.[ch] tests/unit/*.[ch] tests/fuzz/*.[ch] \
		tests/e2e/*.[ch] tests/escape/*.[ch] bench/*.[ch]))

MOAT := $(BUILD)/moat

.PHONY: all deps test cpython unit unit-build unit-asan unit-asan-build e2e e2e-asan bench bench-readme bench-net bench-https bench-oci \
	fuzz fuzz-build fuzz-smoke demo docs docs-check format format-check \
	clean help

all: $(MOAT)

# Keep every object, also those only reached through pattern rules (the fuzz
# build): make would otherwise delete them as intermediates after each run.
.SECONDARY:

# ---------------------------------------------------------------- build/moat

$(MOAT): $(OBJS)
	$(call msg,LD,$@)
	@if [ ! -f $(MAIN_SRC) ]; then echo "moat: $(MAIN_SRC) is missing" >&2; exit 1; fi
	$(Q)$(CC) $(M_CFLAGS) $(LDFLAGS) -o $@ $(OBJS) $(M_LDLIBS)

$(BUILD)/obj/%.o: %.c
	$(call msg,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(M_CPPFLAGS) $(M_CFLAGS) $(DEPFLAGS) -c -o $@ $<

$(BUILD)/asan/obj/%.o: %.c
	$(call msg,CC-SAN,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(M_CPPFLAGS) $(ASAN_CFLAGS) $(DEPFLAGS) -c -o $@ $<

$(BUILD)/fuzz/obj/%.o: %.c
	$(call msg,CLANG,$<)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(M_CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,$(FUZZ_SAN) $(DEPFLAGS) -c -o $@ $<

# ---------------------------------------------------------------- unit tests

# Test sources get the same warnings; Criterion's headers are clean with them.
$(BUILD)/tests/obj/%.o: %.c
	$(call msg,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(M_CPPFLAGS) $(CRIT_CFLAGS) $(M_CFLAGS) $(DEPFLAGS) -c -o $@ $<

$(BUILD)/asan/tests/obj/%.o: %.c
	$(call msg,CC-SAN,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(M_CPPFLAGS) $(CRIT_CFLAGS) $(ASAN_CFLAGS) $(DEPFLAGS) -c -o $@ $<

define unit_rules
$(BUILD)/tests/unit-$(1): $(patsubst %.c,$(BUILD)/tests/obj/%.o,$(call unit_srcs,$(1))) $(LIB_OBJS)
	$$(call msg,LD,$$@)
	@mkdir -p $$(@D)
	$(Q)$$(CC) $$(M_CFLAGS) $$(LDFLAGS) -o $$@ $$^ $$(CRIT_LIBS) $$(M_LDLIBS)

$(BUILD)/asan/tests/unit-$(1): $(patsubst %.c,$(BUILD)/asan/tests/obj/%.o,$(call unit_srcs,$(1))) $(ASAN_LIB_OBJS)
	$$(call msg,LD-SAN,$$@)
	@mkdir -p $$(@D)
	$(Q)$$(CC) $$(ASAN_CFLAGS) $$(LDFLAGS) -o $$@ $$^ $$(CRIT_LIBS) $$(M_LDLIBS)
endef
$(foreach m,$(UNIT_MODULES),$(eval $(call unit_rules,$(m))))

unit-build: $(UNIT_BINS)
unit-asan-build: $(ASAN_UNIT_BINS)

# Each suite runs from the repo root (fixtures are found by relative path)
# with MOAT pointing at the normal binary for suites that spawn roles.
unit: unit-build
	@bash mk/run-unit.sh normal $(UNIT_BINS)

unit-asan: unit-asan-build
	@bash mk/run-unit.sh asan $(ASAN_UNIT_BINS)

# ---------------------------------------------------------------- fuzzers

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB_OBJS)
	$(call msg,FUZZ,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(M_CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer,$(FUZZ_SAN) $(DEPFLAGS) $(LDFLAGS) -o $@ $(filter %.c %.o,$^) $(M_LDLIBS)

fuzz-build: $(FUZZ_BINS)

# Seeds are copied so that the repo's corpus is never modified by a run.
fuzz: fuzz-build
	@bash mk/run-fuzz.sh $(FUZZ_SECONDS) $(FUZZ_NAMES)

# A quick deterministic pass for `make test`: every seed plus a few thousand
# mutations with a fixed seed, so a fuzzer that no longer builds or crashes on
# its corpus fails the test run.
fuzz-smoke: fuzz-build
	@bash mk/run-fuzz.sh smoke $(FUZZ_NAMES)

# ---------------------------------------------------------------- e2e, test

e2e: $(MOAT)
	@MOAT=$(abspath $(MOAT)) bash tests/e2e/run.sh

# The same end-to-end and barrier tests against a sentry and gofer built
# with ASan/UBSan: memory errors a guest can trigger show up as failures.
# Leak checks are off: the sentry exits with its tables still allocated.
ASAN_MOAT := $(BUILD)/asan/moat
$(ASAN_MOAT): $(ASAN_LIB_OBJS) $(BUILD)/asan/obj/$(MAIN_SRC:.c=.o)
	$(call msg,LD,$@)
	$(Q)$(CC) $(ASAN_CFLAGS) $(LDFLAGS) -o $@ $^ $(M_LDLIBS)

e2e-asan: $(ASAN_MOAT)
	@MOAT=$(abspath $(ASAN_MOAT)) ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
		UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 bash tests/e2e/run.sh

# CPython's regression tests, inside the sandbox (tests/cpython/run.sh).
cpython: $(MOAT)
	@MOAT=$(abspath $(MOAT)) bash tests/cpython/run.sh

test:
	@MAKE="$(MAKE)" NPROC=$(NPROC) bash mk/test.sh

# The OCI runtime-tools validation suite against moat and runc (not part of
# `make test`): RUNTIME_TOOLS is a checkout of opencontainers/runtime-tools;
# the report goes to build/oci-validation/report.md (tests/oci/validation.sh).
test-oci-validation: $(MOAT)
	@[ -n "$(RUNTIME_TOOLS)" ] || { echo "test-oci-validation: RUNTIME_TOOLS=DIR, a checkout of opencontainers/runtime-tools"; exit 2; }
	@MOAT=$(abspath $(MOAT)) bash tests/oci/validation.sh "$(RUNTIME_TOOLS)" $(BUILD)/oci-validation

# ---------------------------------------------------------------- docs

docs: $(MOAT)
	$(call msg,GEN,docs/syscalls.md)
	@mkdir -p $(BUILD)/docs
	$(Q)$(MOAT) help syscalls --markdown > $(BUILD)/docs/syscalls.md
	$(Q)cp $(BUILD)/docs/syscalls.md docs/syscalls.md

docs-check: $(MOAT)
	@mkdir -p $(BUILD)/docs
	@if ! $(MOAT) help syscalls --markdown > $(BUILD)/docs/syscalls.md; then \
		echo "docs-check: FAILED: '$(MOAT) help syscalls --markdown' exited non-zero" >&2; exit 1; fi
	@if [ ! -f docs/syscalls.md ]; then \
		echo "docs-check: FAILED: docs/syscalls.md does not exist; run 'make docs' and commit it" >&2; exit 1; fi
	@if ! cmp -s docs/syscalls.md $(BUILD)/docs/syscalls.md; then \
		echo "docs-check: FAILED: docs/syscalls.md differs from the syscall table;" >&2; \
		echo "docs-check: run 'make docs' and commit docs/syscalls.md. Difference:" >&2; \
		diff -u docs/syscalls.md $(BUILD)/docs/syscalls.md | head -40 >&2; exit 1; fi
	@echo "docs-check: docs/syscalls.md matches the syscall table"

# ---------------------------------------------------------------- format

format:
	$(Q)$(CLANG_FORMAT) -i $(FORMAT_FILES)

format-check:
	@if [ -z "$(strip $(FORMAT_FILES))" ]; then echo "format-check: no C files"; exit 0; fi
	@bad=""; for f in $(FORMAT_FILES); do \
		$(CLANG_FORMAT) --dry-run --Werror "$$f" >/dev/null 2>&1 || bad="$$bad $$f"; \
	done; \
	if [ -n "$$bad" ]; then \
		echo "format-check: FAILED: not clang-formatted:$$bad" >&2; \
		echo "format-check: run 'make format' (clang-format -i) and commit the result" >&2; \
		exit 1; fi; \
	echo "format-check: $(words $(FORMAT_FILES)) files clean"

# ---------------------------------------------------------------- demo, bench

demo: $(MOAT)
	@MOAT=$(abspath $(MOAT)) bash mk/demo.sh

$(BUILD)/bench/syscalls: bench/syscalls.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 -O2 -g $(WARNINGS) -D_GNU_SOURCE -static -o $@ $<

bench: $(MOAT) $(BUILD)/bench/syscalls
	@MOAT=$(abspath $(MOAT)) BENCH_BIN=$(abspath $(BUILD)/bench/syscalls) bash bench/run.sh

# The same run, and the table goes into README.md's Performance section.
bench-readme: $(MOAT) $(BUILD)/bench/syscalls
	@MOAT=$(abspath $(MOAT)) BENCH_BIN=$(abspath $(BUILD)/bench/syscalls) bash bench/run.sh --update-readme

# Container start-up alone (bench/oci.sh; make bench runs it too).
bench-oci: $(MOAT)
	@MOAT=$(abspath $(MOAT)) bash bench/oci.sh

# The network table alone (bench/net.sh; make bench runs it last).
bench-net: $(MOAT)
	@MOAT=$(abspath $(MOAT)) bash bench/net.sh

# HTTPS natively, passed through, through the broker, through mitmproxy
# (bench/https.sh; make bench runs it after bench-net).
bench-https: $(MOAT)
	@MOAT=$(abspath $(MOAT)) bash bench/https.sh

# ---------------------------------------------------------------- deps

# Installed only when missing: a machine that has them all never calls apt.
DEPS_PKGS := build-essential binutils clang libclang-rt-14-dev clang-format pkg-config libseccomp-dev \
	libcap-dev liburing-dev libunwind-dev libcriterion-dev libjson-c-dev liblwip-dev libslirp-dev \
	libssl-dev libnghttp2-dev zlib1g-dev libbrotli-dev libzstd-dev openssl \
	busybox-static python3 libpython3.11-testsuite bash coreutils procps iproute2 nftables curl
# The OCI engines tests/oci drives moat under, and runc to compare with;
# a notebook's client and kernel (tests/e2e/test_notebook.sh).
TEST_PKGS  := runc podman containerd python3-nbclient python3-nbformat python3-ipykernel \
	python3-requests python3-grpcio python3-grpc-tools python3-h2 containernetworking-plugins
BENCH_PKGS := runsc proot hyperfine iperf3 slirp4netns passt mitmproxy

deps:
	@missing=""; \
	for p in $(DEPS_PKGS) $(TEST_PKGS) $(BENCH_PKGS); do \
		dpkg-query -W -f='$${Status}' "$$p" 2>/dev/null | grep -q 'install ok installed' \
			|| missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then echo "deps: all packages present"; exit 0; fi; \
	echo "deps: installing:$$missing"; \
	sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
	$$sudo apt-get update -q && \
	DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -q --no-install-recommends $$missing

# ---------------------------------------------------------------- misc

clean:
	rm -rf $(BUILD)

help:
	@sed -n '1,/^$$/p' Makefile | sed 's/^# \{0,1\}//'

-include $(OBJS:.o=.d) $(ASAN_LIB_OBJS:.o=.d) $(FUZZ_LIB_OBJS:.o=.d)
-include $(wildcard $(BUILD)/tests/obj/tests/unit/*/*.d $(BUILD)/asan/tests/obj/tests/unit/*/*.d)
-include $(wildcard $(BUILD)/fuzz/fuzz_*.d)
