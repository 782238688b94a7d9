#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# fuzz.sh SECONDS - build every tests/fuzz/fuzz_*.c with libFuzzer and run each
# for SECONDS (0: build, seed and check the regression inputs only), FUZZ_JOBS
# targets at a time (default: one per CPU).  The
# library is compiled with clang and coverage instrumentation into
# build-fuzz/ ($FUZZ_OUT).  Seed corpora: tests/fuzz/corpus/<name>/ (small
# committed inputs, where there are any), inputs made here (below) and the
# real recordings in ../shared/data listed in tests/fuzz/seeds-<name>.txt.  A
# finding fails the run and leaves its input in build-fuzz/crashes/<name>/
# (and in $FUZZ_ARTIFACTS/<name>/ when set; scripts/fuzz-run.sh); with
# FUZZ_FINDINGS_FATAL=0 it is only reported.  A failing committed regression
# input (tests/fuzz/regress/<name>/) always fails the run.
set -eu
secs=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${FUZZ_OUT:-build-fuzz}
shared=${KS_SHARED:-$root/../shared}
CC=${FUZZ_CC:-clang}
flags="-g -O1 -std=gnu11 -D_GNU_SOURCE -Iinclude -Isrc -I$out/gen $(pkg-config --cflags libtraceevent libtracefs libzstd zlib libelf json-c libprotobuf-c libbpf)"
san="-fsanitize=address,undefined -fno-sanitize-recover=all"
libs="$(pkg-config --libs libtraceevent libtracefs libzstd zlib libelf json-c libprotobuf-c libbpf) -lm -lpthread"
mkdir -p "$out/obj" "$out/gen"
# the Perfetto protobuf messages (src/output/perfetto_pb.c), as the Makefile makes them
if [ ! -f "$out/gen/perfetto_trace.pb-c.c" ] ||
   [ src/output/perfetto_trace.proto -nt "$out/gen/perfetto_trace.pb-c.c" ]; then
	protoc-c --c_out="$out/gen" --proto_path=src/output src/output/perfetto_trace.proto
fi
# stale OBJ: OBJ is missing or older than a file it was built from (its
# source and headers, from the dependency file the compiler wrote).
stale() {
	local dep
	[ -f "$1" ] && [ -f "$1.d" ] || return 0
	for dep in $(sed -e 's/^[^:]*://' -e 's/\\$//' "$1.d"); do
		[ "$dep" -nt "$1" ] && return 0
	done
	return 1
}
# the BPF engine's program skeletons (engine_bpf.c includes them), as the
# Makefile makes them; the BPF programs themselves are not host code
# shellcheck disable=SC2046
make --no-print-directory -s BUILD="$out" $(find src -name '*.bpf.c' | sed "s|.*/\(.*\)\.bpf\.c|$out/gen/\1.skel.h|")
objs=()
# the library, and the command line's format probe (a helper process that
# parses event formats first; the targets set it, as kvmscope's main does)
for src in $(find src -name '*.c' ! -name '*.bpf.c' ! -path 'src/cli/*' | sort) src/cli/format_probe.c "$out/gen/perfetto_trace.pb-c.c"; do
	o="$out/obj/$(echo "$src" | tr / _).o"
	if stale "$o"; then
		$CC $flags $san -fsanitize=fuzzer-no-link -MMD -MF "$o.d" -c "$src" -o "$o"
	fi
	objs+=("$o")
done
# Targets link the archive: each takes only the objects it needs, so its
# binary (whose hash keys the campaign ledger, scripts/fuzz-campaign.sh)
# changes only when code it runs changes.
rm -f "$out/libks-fuzz.a"
ar rcs "$out/libks-fuzz.a" "${objs[@]}"
# Seed inputs made here (small, so that mutations reach deep), each kind
# once: a perf.data template recorded by perf, a generated one, trace.dat
# copies of it in every layout, and report text; small ELF files of every
# type (executable with DWARF, stripped, relocatable, shared, with a
# _stext); a QEMU dump with known call chains.  Only where the tools are.
seeds=$out/seeds
if [ ! -d "$seeds/perfdata" ] && [ -x build/kvmscope ] && command -v perf >/dev/null; then
	mkdir -p "$seeds/perfdata" "$seeds/tracedat" "$seeds/ftrace_text"
	# the template's saved cmdlines (this host's task list, most of a small
	# file) are cut to 8 lines: mutations then hit the records, not them
	if perf kvm stat record -a -o "$seeds/template.data" sleep 0.05 >/dev/null 2>&1; then
		build/tools/gen-perfdata --template "$seeds/template.data" --cmdlines 8 \
			-o "$seeds/perfdata/gen.data" --pairs 60 --rounds --lost 1 --unmatched 2>/dev/null || true
		build/tools/gen-perfdata --template "$seeds/template.data" --cmdlines 8 \
			-o "$seeds/perfdata/empty.data" --pairs 0 2>/dev/null || true
		for v in "6 none" "7 none" "7 zstd" "7 zlib"; do
			set -- $v
			build/kvmscope convert -q -i "$seeds/perfdata/gen.data" -o "$seeds/tracedat/v$1-$2.dat" \
				--file-version "$1" --compression "$2" 2>/dev/null || true
		done
		build/kvmscope dump "$seeds/perfdata/gen.data" 2>/dev/null | head -100 > "$seeds/ftrace_text/gen.txt" || true
	fi
fi
# fuzz_pmu: a perf.data of guests that reprogram their vPMU, and a perf and
# a QEMU command line (NUL-separated, as /proc/PID/cmdline)
if [ ! -d "$seeds/pmu" ] && [ -f "$seeds/template.data" ]; then
	mkdir -p "$seeds/pmu"
	build/tools/gen-perfdata --template "$seeds/template.data" --cmdlines 8 \
		-o "$seeds/pmu/pmu-guest.data" --pairs 60 --rounds --pmu-guest 2>/dev/null || true
	printf '%s\0' perf record -e cycles -C 0-3 -a > "$seeds/pmu/perf-cmdline"
	printf '%s\0' qemu-system-x86_64 -enable-kvm -cpu host,pmu=on -smp 4 > "$seeds/pmu/qemu-cmdline"
fi
if [ ! -d "$seeds/elfsyms" ] && command -v "${HOSTCC:-cc}" >/dev/null; then
	mkdir -p "$seeds/elfsyms"
	printf 'int _stext(void) { return 1; }\nstatic int helper(int x) { return x * 2; }\nint main(void) { return helper(_stext()); }\n' > "$seeds/elfsyms/seed.c"
	cc=${HOSTCC:-cc}
	$cc -g -O0 -o "$seeds/elfsyms/exe-g" "$seeds/elfsyms/seed.c" 2>/dev/null || true
	$cc -O1 -s -o "$seeds/elfsyms/exe-stripped" "$seeds/elfsyms/seed.c" 2>/dev/null || true
	$cc -O1 -c -o "$seeds/elfsyms/object.o" "$seeds/elfsyms/seed.c" 2>/dev/null || true
	$cc -O1 -fPIC -shared -o "$seeds/elfsyms/shared.so" "$seeds/elfsyms/seed.c" 2>/dev/null || true
	$cc -O1 -no-pie -static -nostdlib -Wl,-e,_stext -o "$seeds/elfsyms/static-nolibc" "$seeds/elfsyms/seed.c" 2>/dev/null || true
	rm -f "$seeds/elfsyms/seed.c"
fi
if [ ! -d "$seeds/qemudump" ] && [ -x build/tools/gen-qemudump ]; then
	mkdir -p "$seeds/qemudump"
	build/tools/gen-qemudump -o "$seeds/qemudump/gen.elf" >/dev/null || true
fi
# libtraceevent's own small leaks (tests/lsan.supp, tests/fuzz/lsan-fuzz.supp)
# are not findings.  A small ASan quarantine and short allocation stacks:
# 2-4x more executions.
mkdir -p "$out"
supp=$(cd "$out" && pwd)/lsan.supp
cat tests/lsan.supp tests/fuzz/lsan-fuzz.supp > "$supp"
export LSAN_OPTIONS="suppressions=$supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export ASAN_OPTIONS="quarantine_size_mb=4:malloc_context_size=4:thread_local_quarantine_size_kb=64${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
status=0
targets=()
for f in tests/fuzz/fuzz_*.c; do
	[ -e "$f" ] || continue
	name=$(basename "$f" .c)
	bin="$out/$name"
	$CC $flags $san -fsanitize=fuzzer "$f" "$out/libks-fuzz.a" $libs -o "$bin"
	corpus="$out/corpus/$name"
	mkdir -p "$corpus" "$out/crashes/$name"
	[ -d "tests/fuzz/corpus/$name" ] && cp -n tests/fuzz/corpus/"$name"/* "$corpus"/ 2>/dev/null || true
	# the regression inputs are seeds too (crafted files reach deep paths)
	[ -d "tests/fuzz/regress/$name" ] && cp -n tests/fuzz/regress/"$name"/* "$corpus"/ 2>/dev/null || true
	[ -d "$seeds/${name#fuzz_}" ] && cp -n "$seeds/${name#fuzz_}"/* "$corpus"/ 2>/dev/null || true
	# tests/fuzz/seeds-NAME.txt: "PATH BYTES" per line, a file under
	# ../shared/data (gunzipped if .gz) cut to its first BYTES bytes
	if [ -d "$shared/data" ] && [ -f "tests/fuzz/seeds-$name.txt" ]; then
		while read -r rel bytes; do
			case "$rel" in ''|'#'*) continue ;; esac
			f=$shared/data/$rel seed=$corpus/shared-$(basename "$rel" .gz)
			[ -f "$f" ] && [ ! -e "$seed" ] || continue
			case "$rel" in
			*.gz) zcat "$f" | head -c "${bytes:-65536}" > "$seed" ;;
			*) head -c "${bytes:-65536}" "$f" > "$seed" ;;
			esac
		done < "tests/fuzz/seeds-$name.txt"
	fi
	regress=()
	[ -d "tests/fuzz/regress/$name" ] && regress=(tests/fuzz/regress/"$name"/*)
	if [ ${#regress[@]} -gt 0 ]; then
		"$bin" -runs=0 "${regress[@]}" >/dev/null 2>&1 || { echo "$name: a regression input fails"; status=1; }
	fi
	targets+=("$name")
done
[ "$secs" != 0 ] || exit $status # 0: build and seed only (for scripts/fuzz-campaign.sh)

# The timed runs and their verdict (a new finding fails the run).
scripts/fuzz-run.sh "$out" "$secs" "${targets[@]}" || status=1
exit $status
