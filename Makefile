# SPDX-License-Identifier: GPL-2.0-only
# kvmscope - build, test, benchmark and fuzz.
#
#   make            build the kvmscope binary only (build/kvmscope)
#   make tests      build everything else too: tools, test programs, benchmarks
#   make install    install the binary, the man pages, the shell completion,
#                   the Prometheus rules and Grafana dashboard (share/kvmscope/)
#                   (PREFIX=/usr/local, DESTDIR, BINDIR, MANDIR, ...; uninstall too)
#   make deb        build the Debian package (scripts/build-deb.sh)
#   make demo       install the build and run-time dependencies only
#                   (scripts/install-deps.sh --demo), build, and run kvmscope
#                   on real data
#   make check      install all dependencies (those of the tests too), build,
#                   run the test suite (TAP;
#                   in parallel: make check -j2; tests/run.sh says more)
#   make check SAN=1  the same built with AddressSanitizer + UBSan (build-san/)
#   make check-lab  the QEMU lab: kvmscope sample / unwind on a real guest;
#                   record, top, stat against perf on a nested real KVM (SVM);
#                   the halt view against KVM's statistics on real halts
#   make bench      benchmarks against perf / trace-cmd (prints ratios)
#   make fuzz       build the libFuzzer targets and run each FUZZ_SECONDS
#
# Sources are discovered: every .c under src/<dir>/ (except src/cli) goes
# into libkvmscope.a, src/cli/*.c make the kvmscope binary, each tools/*.c is
# one program, each tests/*/test_*.c is one test program.
#
# CPPFLAGS, CFLAGS (default -O2 -g) and LDFLAGS from the environment or the
# command line are honoured (Debian's hardening flags reach every object and
# the link).  The version is `git describe` in a git checkout, else the
# VERSION file; `kvmscope --version` prints it.

SAN ?=
ifeq ($(SAN),1)
BUILD ?= build-san
SANFLAGS = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
else
BUILD ?= build
SANFLAGS =
endif

CC ?= cc
PKG_CONFIG ?= pkg-config
PKGS = libtraceevent libtracefs libzstd zlib libelf ncursesw json-c
# The Debian package that provides each pkg-config module.
deb_libtraceevent = libtraceevent-dev
deb_libtracefs = libtracefs-dev
deb_libzstd = libzstd-dev
deb_zlib = zlib1g-dev
deb_libelf = libelf-dev
deb_ncursesw = libncurses-dev
deb_json-c = libjson-c-dev
# Perfetto's protobuf trace (src/output/perfetto_pb.c): libprotobuf-c, and
# protoc-c (protobuf-c-compiler) compiles src/output/perfetto_trace.proto.
PKGS += libprotobuf-c
deb_libprotobuf-c = libprotobuf-c-dev
PROTOC_C ?= protoc-c
# libvirt (src/input/libvirt.c): its headers only, at build time; the
# library, libvirt.so.0, is loaded when a connection is opened, so that
# kvmscope runs on hosts without libvirt.  libmicrohttpd likewise: the
# exporter loads libmicrohttpd.so.12 when it starts
# (src/cli/cmd_exporter_http.c); linked, it and the TLS libraries it needs
# cost every command ~1 ms.
PKGS_HEADERS = libvirt libmicrohttpd
deb_libvirt = libvirt-dev
# The BPF engine (src/input/engine_bpf.c): libbpf loads the program of
# src/input/bpf/*.bpf.c, compiled by clang for the BPF target and embedded
# as a bpftool-generated skeleton ($(BUILD)/gen/NAME.skel.h).
PKGS += libbpf
deb_libbpf = libbpf-dev
CLANG ?= clang
BPFTOOL ?= $(or $(shell command -v bpftool 2>/dev/null),/usr/sbin/bpftool)
WERROR ?= -Werror
OPT ?= -O2
CFLAGS ?= $(OPT) -g
# pkg-config is asked once, when the first compile or link needs it (so that
# `make deps`, `make clean` and `make install` of a built tree do not), and a
# missing module stops the build naming the package to install.
pkg_missing = $(if $(shell command -v $(PKG_CONFIG) 2>/dev/null),$(strip \
	$(foreach p,$(PKGS) $(PKGS_HEADERS),$(if $(shell $(PKG_CONFIG) --exists $(p) && echo y),,$(or $(deb_$(p)),$(p)-dev) (pkg-config $(p))))),pkg-config)
pkg_check = $(if $(pkg_missing),$(error missing: $(subst $(rparen) ,$(rparen)$(comma) ,$(pkg_missing)); \
	run 'make deps' or apt-get install them),)
comma := ,
rparen := )
PKG_CFLAGS = $(eval PKG_CFLAGS := $(pkg_check)$(shell $(PKG_CONFIG) --cflags $(PKGS) $(PKGS_HEADERS)))$(PKG_CFLAGS)
PKG_LIBS = $(eval PKG_LIBS := $(pkg_check)$(shell $(PKG_CONFIG) --libs $(PKGS)))$(PKG_LIBS)
KS_CFLAGS = -std=gnu11 -Wall -Wextra $(WERROR) -Iinclude -Isrc -D_GNU_SOURCE $(PKG_CFLAGS) $(SANFLAGS)
KS_LIBS = $(PKG_LIBS) -lm -lpthread -ldl $(SAN_LIBS)
# Under the sanitizers, libtirpc is loaded when the program starts: ASan
# intercepts the XDR functions that libvirt's RPC calls and looks the real
# ones up at start-up, so with libtirpc loaded only later (by libvirt.so.0's
# dlopen) its interceptors would call NULL.
ifneq ($(SANFLAGS),)
SAN_TIRPC := $(shell $(CC) -print-file-name=libtirpc.so.3)
SAN_LIBS = $(if $(filter /%,$(SAN_TIRPC)),-Wl$(comma)--push-state$(comma)--no-as-needed $(SAN_TIRPC) -Wl$(comma)--pop-state)
endif
KS_LDFLAGS = $(CFLAGS) $(LDFLAGS) $(SANFLAGS)

# The version: git describe in a checkout of this tree, else the VERSION file.
# Without a tag: VERSION plus the commit (0.1.0-g674ec8a, -dirty if changed).
VERSION_FILE := $(strip $(shell cat VERSION 2>/dev/null))
IN_GIT := $(shell [ "$$(git -C . rev-parse --show-toplevel 2>/dev/null)" = "$(CURDIR)" ] && echo y)
ifeq ($(IN_GIT),y)
KS_VERSION := $(or $(shell git describe --tags --dirty 2>/dev/null),$(VERSION_FILE)-g$(shell git describe --always --dirty 2>/dev/null))
else
KS_VERSION := $(VERSION_FILE)
endif
ifeq ($(KS_VERSION),)
$(error no version: VERSION file missing and not a git checkout)
endif

# Installation (GNU conventions; DESTDIR for staging, as dpkg does).
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
ZSHCOMPDIR ?= $(DATADIR)/zsh/site-functions
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
# the exporter's Prometheus rules and Grafana dashboard
KSDATADIR ?= $(DATADIR)/kvmscope
KSDATA = $(wildcard share/kvmscope/*.yml share/kvmscope/*.json)
INSTALL ?= install
MANPAGES = $(wildcard man/*.1)
# systemd units (the exporter's) are installed when the tree has them.
UNITS = $(wildcard systemd/*.service systemd/*.socket systemd/*.timer)

# every directory of src/ but cli (tests/util/include_layers_test.sh orders them)
LIB_DIRS = $(filter-out cli,$(patsubst src/%/,%,$(sort $(wildcard src/*/))))
LIB_SRC = $(foreach d,$(LIB_DIRS),$(wildcard src/$(d)/*.c))
CLI_SRC = $(wildcard src/cli/*.c)
TOOL_SRC = $(wildcard tools/*.c)
TESTLIB_SRC = $(wildcard tests/lib/*.c)
TEST_SRC = $(wildcard tests/*/test_*.c)
BENCH_SRC = $(wildcard bench/*.c)

LIB_OBJ = $(LIB_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/perfetto_trace.pb-c.o
CLI_OBJ = $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
TESTLIB_OBJ = $(TESTLIB_SRC:%.c=$(BUILD)/obj/%.o)
LIB = $(BUILD)/libkvmscope.a
BIN = $(BUILD)/kvmscope
TOOLS = $(patsubst tools/%.c,$(BUILD)/tools/%,$(TOOL_SRC))
TESTS = $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC))
BENCHES = $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC))

.PHONY: all tests tools deps deps-demo demo check check-lab bench fuzz clean install uninstall deb print-version FORCE
# Keep the object files of tests and tools (make would delete them as intermediates).
.SECONDARY:
all: $(BIN)

# The tools (test-data writers), test programs and benchmarks, with the binary.
tests: $(BIN) $(TOOLS) $(TESTS) $(BENCHES) $(BUILD)/tests/arch/kvmscope-testarch
# The binary and the test-data writers (scripts/fuzz.sh seeds its corpora with them).
tools: $(BIN) $(TOOLS)

# Every dependency (make check's oracles too), or the demo's only.
deps:
	@scripts/install-deps.sh
deps-demo:
	@scripts/install-deps.sh --demo

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(KS_CFLAGS) -MMD -MP -c -o $@ $<

# Generated protobuf-c code, in $(BUILD)/gen (included as "perfetto_trace.pb-c.h").
$(BUILD)/gen/perfetto_trace.pb-c.c: src/output/perfetto_trace.proto
	@mkdir -p $(BUILD)/gen
	$(PROTOC_C) --c_out=$(BUILD)/gen --proto_path=src/output $<
$(BUILD)/gen/perfetto_trace.pb-c.h: $(BUILD)/gen/perfetto_trace.pb-c.c ;
$(BUILD)/obj/gen/perfetto_trace.pb-c.o: $(BUILD)/gen/perfetto_trace.pb-c.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(KS_CFLAGS) -I$(BUILD)/gen -MMD -MP -c -o $@ $<
$(BUILD)/obj/src/output/perfetto_pb.o $(BUILD)/obj/tests/output/test_perfetto_pb.o: \
	$(BUILD)/gen/perfetto_trace.pb-c.h
$(BUILD)/obj/src/output/perfetto_pb.o $(BUILD)/obj/tests/output/test_perfetto_pb.o: \
	KS_CFLAGS += -I$(BUILD)/gen

# The BPF engine's program: src/input/bpf/NAME.bpf.c (not in LIB_SRC, which
# takes src/input/*.c only) -> $(BUILD)/gen/NAME.bpf.o (clang, BPF target;
# -g for the BTF libbpf needs) -> $(BUILD)/gen/NAME.skel.h (bpftool), which
# engine_bpf.c includes.  The uapi headers (linux/bpf.h) need the host's
# multiarch include directory, which clang -target bpf does not search.
BPF_SRC = $(wildcard src/input/bpf/*.bpf.c)
BPF_SKEL = $(BPF_SRC:src/input/bpf/%.bpf.c=$(BUILD)/gen/%.skel.h)
BPF_CFLAGS = -target bpf -O2 -g -Wall -Werror -Isrc/input/bpf \
	-I/usr/include/$(shell $(CC) -print-multiarch 2>/dev/null)
$(BUILD)/gen/%.bpf.o: src/input/bpf/%.bpf.c $(wildcard src/input/bpf/*.h)
	@mkdir -p $(dir $@)
	$(CLANG) $(BPF_CFLAGS) -c -o $@ $<
$(BUILD)/gen/%.skel.h: $(BUILD)/gen/%.bpf.o
	$(BPFTOOL) gen skeleton $< name ks_$*_bpf > $@.tmp && mv $@.tmp $@
$(BUILD)/obj/src/input/engine_bpf.o $(BUILD)/obj/tests/input/test_engine_bpf.o: $(BPF_SKEL)
$(BUILD)/obj/src/input/engine_bpf.o $(BUILD)/obj/tests/input/test_engine_bpf.o: \
	KS_CFLAGS += -I$(BUILD)/gen

# main.c is rebuilt when the version changes (the file is rewritten only then).
$(BUILD)/version: FORCE
	@mkdir -p $(dir $@)
	@[ "$$(cat $@ 2>/dev/null)" = '$(KS_VERSION)' ] || echo '$(KS_VERSION)' > $@
$(BUILD)/obj/src/cli/main.o: $(BUILD)/version
$(BUILD)/obj/src/cli/main.o: KS_CFLAGS += -DKS_VERSION='"$(KS_VERSION)"'

$(LIB): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

# the kvm plugin's symbol hook (cmd_merge.c) overrides the plugin's weak one
KS_EXPORTS = -Wl,--export-dynamic-symbol=tep_plugin_kvm_get_func \
	     -Wl,--export-dynamic-symbol=tep_plugin_kvm_put_func
$(BIN): $(CLI_OBJ) $(LIB)
	$(CC) $(KS_LDFLAGS) $(KS_EXPORTS) -o $@ $(CLI_OBJ) $(LIB) $(KS_LIBS)

# kvmscope with a test-only architecture (tests/arch/testarch.c defines the
# list of architectures, so src/arch/arch_list.o is not linked).
$(BUILD)/tests/arch/kvmscope-testarch: $(CLI_OBJ) $(BUILD)/obj/tests/arch/testarch.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(KS_LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/obj/tests/arch/testarch.o $(LIB) $(KS_LIBS)

$(BUILD)/tools/%: $(BUILD)/obj/tools/%.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(KS_LDFLAGS) -o $@ $< $(LIB) $(KS_LIBS)

$(BUILD)/bench/%: $(BUILD)/obj/bench/%.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(KS_LDFLAGS) -o $@ $< $(LIB) $(KS_LIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(TESTLIB_OBJ) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(KS_LDFLAGS) -o $@ $< $(TESTLIB_OBJ) $(LIB) $(KS_LIBS)

demo: deps-demo
	@$(MAKE) --no-print-directory tools
	@scripts/demo.sh $(BUILD)

# The tests are built on every CPU unless make was given -j itself.
PARALLEL = $(if $(findstring -j,$(MAKEFLAGS)),,-j$(shell nproc))
check: deps
	@$(MAKE) --no-print-directory $(PARALLEL) tests
	@tests/run.sh $(BUILD)

check-lab: deps
	@$(MAKE) --no-print-directory all $(BUILD)/tools/minivmm
	@# one guest at a time: each is a TCG-emulated machine timing real KVM
	@# exits and halts, which two side by side on 2 CPUs slow past the
	@# tests' bounds (a polled halt's ns, the last exit of a window)
	@KS_JOBS=1 tests/run.sh $(BUILD) tests/lab/lab_test.sh tests/lab/nested_test.sh tests/lab/halt_lab_test.sh

bench: deps
	@$(MAKE) --no-print-directory tests
	@bench/run.sh $(BUILD)

FUZZ_SECONDS ?= 60
fuzz: deps
	@$(MAKE) --no-print-directory SAN= BUILD=build tools
	@scripts/fuzz.sh $(FUZZ_SECONDS)

install: $(BIN)
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR)
	$(INSTALL) -m 755 $(BIN) $(DESTDIR)$(BINDIR)/kvmscope
	$(INSTALL) -m 644 $(MANPAGES) $(DESTDIR)$(MANDIR)/man1/
	$(INSTALL) -m 644 completion/kvmscope.bash $(DESTDIR)$(BASHCOMPDIR)/kvmscope
	$(INSTALL) -m 644 completion/_kvmscope $(DESTDIR)$(ZSHCOMPDIR)/_kvmscope
	$(INSTALL) -d $(DESTDIR)$(KSDATADIR)
	$(INSTALL) -m 644 $(KSDATA) $(DESTDIR)$(KSDATADIR)/
ifneq ($(UNITS),)
	$(INSTALL) -d $(DESTDIR)$(SYSTEMDUNITDIR)
	$(INSTALL) -m 644 $(UNITS) $(DESTDIR)$(SYSTEMDUNITDIR)/
endif

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/kvmscope $(DESTDIR)$(BASHCOMPDIR)/kvmscope \
		$(DESTDIR)$(ZSHCOMPDIR)/_kvmscope \
		$(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(MANPAGES))) \
		$(addprefix $(DESTDIR)$(SYSTEMDUNITDIR)/,$(notdir $(UNITS))) \
		$(addprefix $(DESTDIR)$(KSDATADIR)/,$(notdir $(KSDATA)))
	rmdir $(DESTDIR)$(KSDATADIR) 2>/dev/null || true

print-version:
	@echo '$(KS_VERSION)'

# The Debian package, built in a scratch copy; the .deb lands in DEB_OUT.
DEB_OUT ?= $(BUILD)/deb
deb:
	@scripts/build-deb.sh $(DEB_OUT)

clean:
	rm -rf build build-san build-fuzz

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
