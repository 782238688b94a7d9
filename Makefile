# kvmscope - build, test, benchmark and fuzz.
#
#   make            build the library, the CLI, the tools and the tests
#   make demo       install dependencies, build, and run kvmscope on real data
#   make check      install dependencies, build, run the test suite (TAP;
#                   in parallel: make check -j2; tests/run.sh says more)
#   make check SAN=1  the same built with AddressSanitizer + UBSan (build-san/)
#   make check-lab  the QEMU lab: kvmscope sample / unwind on a real guest
#   make bench      benchmarks against perf / trace-cmd (prints ratios)
#   make fuzz       build the libFuzzer targets and run each FUZZ_SECONDS
#
# Sources are discovered: every .c under src/<dir>/ (except src/cli) goes
# into libkvmscope.a, src/cli/*.c make the kvmscope binary, each tools/*.c is
# one program, each tests/*/test_*.c is one test program.

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
PKGS = libtraceevent libtracefs libzstd zlib libelf libdw
WERROR ?= -Werror
OPT ?= -O2
CFLAGS ?= $(OPT) -g
KS_CFLAGS = -std=gnu11 -Wall -Wextra $(WERROR) -Iinclude -Isrc -D_GNU_SOURCE \
	$(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null) $(SANFLAGS)
KS_LIBS = $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null) -lm -lpthread

LIB_DIRS = input arch analysis output symbols unwind util
LIB_SRC = $(foreach d,$(LIB_DIRS),$(wildcard src/$(d)/*.c))
CLI_SRC = $(wildcard src/cli/*.c)
TOOL_SRC = $(wildcard tools/*.c)
TESTLIB_SRC = $(wildcard tests/lib/*.c)
TEST_SRC = $(wildcard tests/*/test_*.c)
BENCH_SRC = $(wildcard bench/*.c)

LIB_OBJ = $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
CLI_OBJ = $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
TESTLIB_OBJ = $(TESTLIB_SRC:%.c=$(BUILD)/obj/%.o)
LIB = $(BUILD)/libkvmscope.a
BIN = $(BUILD)/kvmscope
TOOLS = $(patsubst tools/%.c,$(BUILD)/tools/%,$(TOOL_SRC))
TESTS = $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC))
BENCHES = $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC))

.PHONY: all deps demo check check-lab bench fuzz clean
# Keep the object files of tests and tools (make would delete them as intermediates).
.SECONDARY:
all: $(BIN) $(TOOLS) $(TESTS) $(BENCHES)

deps:
	@scripts/install-deps.sh

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(KS_CFLAGS) -MMD -MP -c -o $@ $<

$(LIB): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(BIN): $(CLI_OBJ) $(LIB)
	$(CC) $(CFLAGS) $(SANFLAGS) -o $@ $(CLI_OBJ) $(LIB) $(KS_LIBS)

$(BUILD)/tools/%: $(BUILD)/obj/tools/%.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) -o $@ $< $(LIB) $(KS_LIBS)

$(BUILD)/bench/%: $(BUILD)/obj/bench/%.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) -o $@ $< $(LIB) $(KS_LIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(TESTLIB_OBJ) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) -o $@ $< $(TESTLIB_OBJ) $(LIB) $(KS_LIBS)

demo: deps
	@$(MAKE) --no-print-directory all
	@scripts/demo.sh $(BUILD)

check: deps
	@$(MAKE) --no-print-directory all
	@tests/run.sh $(BUILD)

check-lab: deps
	@$(MAKE) --no-print-directory all
	@tests/run.sh $(BUILD) tests/lab/lab_test.sh

bench: deps
	@$(MAKE) --no-print-directory all
	@bench/run.sh $(BUILD)

FUZZ_SECONDS ?= 60
fuzz: deps
	@scripts/fuzz.sh $(FUZZ_SECONDS)

clean:
	rm -rf build build-san build-fuzz

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
