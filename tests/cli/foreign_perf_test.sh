#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# foreign_perf_test.sh - `kvmscope stat --format perf` must print, byte for
# byte, what each architecture's own perf prints on the same file:
# Debian's linux-perf for arm64, ppc64el, s390x (bookworm, perf 6.1) and
# riscv64 (trixie, perf 6.12) under qemu-user (scripts/foreign-perf.sh), and
# Debian's x86 perf on an AMD file (AuthenticAMD CPUID: SVM names).
#
# Files: tests/cli/foreign_scenario.py ARCH SEED (many vCPUs in two VMs,
# every code the kernel defines and unknown ones, thread reuse, arm64
# vcpu_load/put, the arch's other event classes), written by
# tools/gen-kvm-perfdata in the arch's byte orders: arm64 and powerpc in
# both (perf reads the little-endian file: perf 6.1 reads no tracepoint file
# of the other byte order, whichever the host's: arm64 and x86 perf fail on
# big-endian files, s390 perf on little-endian ones; kvmscope's output on
# each order must equal perf's), s390 big endian, riscv and x86 little.
# Three random seeds per architecture, each printed in the test names; set
# KS_FOREIGN_SEEDS="N M ..." to replay.  Views of the first seed's file:
# every -k sort key, each --vcpu N, each VM (-p), each event class; of the
# other seeds' (qemu-user needs ~0.8 s to start perf): -k sample, each
# class, two vCPUs.  perf 6.1 knows only -k sample and time, and on arm64
# only the vmexit class.  The one documented
# difference, perf's Min Time with --vcpu, is masked there.
#
# A foreign perf that is not installed is a skip with one line saying why,
# and a `not ok` in CI (CI=true): `make check` installs it (install-deps.sh).
set -u
K=${KVMSCOPE:?}
GEN=${KS_BUILD:?}/tools/gen-kvm-perfdata
FP="$PWD/scripts/foreign-perf.sh"
T=${KS_TMP:?}/foreign_perf
EXITS=${KS_FOREIGN_EXITS:-1200}
JOBS=${KS_FOREIGN_JOBS:-2}
mkdir -p "$T"

if [ -n "${KS_FOREIGN_SEEDS:-}" ]; then
	seeds=$KS_FOREIGN_SEEDS
else
	seeds="$((RANDOM * 32768 + RANDOM)) $((RANDOM * 32768 + RANDOM)) $((RANDOM * 32768 + RANDOM))"
fi

# The report block: "Analyze events" to "Total Samples", without perf's
# "unknown kvm exit code" diagnostics (stderr, interleaved).
block() { sed -n '/^Analyze events/,/^Total Samples/p' | grep -v '^unknown kvm exit code'; }
# Min Time with --vcpu: the first "NN.NNus" after the Time% column.
mask_min() { sed -E '/us \( \+-/s/% +[0-9]+\.[0-9]+us /% MIN_TIMEus /'; }

# One view: NAME FILE KSFILES ARCH ARGS...: perf on FILE, kvmscope on each of
# KSFILES (the same scenario in other byte orders); one ok / not ok line.
view() {
	local name=$1 f=$2 ksfiles=$3 arch=$4 out g
	shift 4
	out="$T/$(echo "$name" | tr -c 'A-Za-z0-9\n' '_')"
	local mask=cat
	case " $* " in *" --vcpu "*) mask=mask_min ;; esac
	if [ "$arch" = x86 ]; then
		perf kvm -i "$f" stat report "$@" 2>&1 >/dev/null | block | $mask > "$out.perf"
	else
		"$FP" run "$arch" kvm -i "$f" stat report "$@" 2>&1 >/dev/null | block | $mask > "$out.perf"
	fi
	if [ ! -s "$out.perf" ]; then
		echo "not ok $name: perf printed no report"
		return
	fi
	for g in $ksfiles; do
		"$K" stat -i "$g" --format perf "$@" 2>"$out.err" | block | $mask > "$out.ks"
		if ! diff -u "$out.perf" "$out.ks" > "$out.diff"; then
			echo "not ok $name: kvmscope on $(basename "$g") differs from perf: $(head -12 "$out.diff" | tr '\n' '|')"
			return
		fi
	done
	echo "ok $name"
}

# arch: machine, cpuid, formats, byte orders, event classes
declare -A MACHINE=([arm64]=aarch64 [powerpc]=ppc64le [s390]=s390x [riscv]=riscv64 [x86]=x86_64)
declare -A CPUID=([arm64]=0x00000000410fd0c0 [powerpc]=004e1202 [s390]=IBM,8561,703,T01,3.6,002f
	[riscv]=0x489-0x8000000000000007-0x4 [x86]=AuthenticAMD,25,1,1)
declare -A ORDERS=([arm64]="le be" [powerpc]="le be" [s390]="be" [riscv]="le" [x86]="le")
declare -A CLASSES=([arm64]="" [powerpc]="hcall" [s390]="" [riscv]="" [x86]="")
mkdir -p "$T/x86fmt/kvm"
cp tests/fixtures/x86-6.18/*.format "$T/x86fmt/kvm/"
declare -A FORMATS=([arm64]=tests/fixtures/arm64 [powerpc]=tests/fixtures/powerpc
	[s390]=tests/fixtures/s390 [riscv]=tests/fixtures/riscv [x86]="$T/x86fmt")

jobs_file="$T/jobs"
: > "$jobs_file"
for arch in arm64 powerpc s390 riscv x86; do
	label=$arch
	[ $arch = x86 ] && label=x86-amd
	if [ $arch = x86 ]; then
		if ! command -v perf >/dev/null; then
			echo "skip foreign_perf[$label]: perf is not installed"; continue
		fi
	elif ! why=$("$FP" check $arch); then
		if [ "${CI:-}" = true ]; then
			echo "not ok foreign_perf[$label]: $why"
		else
			echo "skip foreign_perf[$label]: $why"
		fi
		continue
	fi
	i=0
	for seed in $seeds; do
		i=$((i + 1))
		tag="$label seed=$seed ${ORDERS[$arch]// /+}"
		scn="$T/$arch.$seed.scn"
		if ! python3 tests/cli/foreign_scenario.py $arch "$seed" "$scn" "$EXITS" 2>"$T/err"; then
			echo "not ok foreign_perf[$tag]: scenario failed: $(head -1 "$T/err")"
			continue
		fi
		# perf reads the file of its own byte order (perf 6.1 on a little-
		# endian host fails on a big-endian tracepoint file); kvmscope
		# reads every order of the same scenario and must print the same.
		f= ksfiles= ok=1
		for order in ${ORDERS[$arch]}; do
			opt= machine=${MACHINE[$arch]}
			if [ $order = be ]; then
				opt=--big-endian
				[ $arch = powerpc ] && machine=ppc64
				[ $arch = arm64 ] && machine=aarch64_be
			fi
			g="$T/$arch.$seed.$order.data"
			if ! "$GEN" --formats "${FORMATS[$arch]}" --machine $machine --cpuid "${CPUID[$arch]}" $opt \
				-o "$g" "$scn" 2>"$T/err"; then
				echo "not ok foreign_perf[$tag]: generator failed ($order): $(head -1 "$T/err")"
				ok=0
			fi
			[ -n "$f" ] || f=$g
			ksfiles="$ksfiles $g"
		done
		[ $ok = 1 ] || continue
		# the vCPU ids in the file: as many views
		nv=$(awk '/^comm [0-9]+ [0-9]+ CPU [0-9]+\/KVM/ { sub(/\/KVM/, "", $5); if ($5 + 1 > n) n = $5 + 1 }
			/^comm-at .* CPU [0-9]+\/KVM/ { sub(/\/KVM/, "", $7); if ($7 + 1 > n) n = $7 + 1 } END { print n }' \
			"$scn")
		# The first seed: every view; the others (qemu-user starts in ~0.8 s
		# per run): -k sample and time, each class, two of the vCPUs.
		keys="sample time" ckeys="sample time" vcpus=$(seq 0 $((nv - 1))) pids="1000 2000"
		if [ $i -gt 1 ]; then
			keys=sample ckeys=sample pids=
			v=$((seed % nv))
			vcpus="$v $(((v + 1 + seed / nv % (nv - 1)) % nv))"  # two different ones
		fi
		{
			for k in $keys; do
				echo "foreign_perf[$tag -k $k]|$f|$ksfiles|$arch|-k $k"
			done
			for c in ${CLASSES[$arch]}; do
				for k in $ckeys; do
					echo "foreign_perf[$tag --event $c -k $k]|$f|$ksfiles|$arch|--event $c -k $k"
				done
			done
			for v in $vcpus; do
				echo "foreign_perf[$tag --vcpu $v]|$f|$ksfiles|$arch|--vcpu $v"
			done
			for p in $pids; do   # the two VMs of foreign_scenario.py
				echo "foreign_perf[$tag -p $p]|$f|$ksfiles|$arch|-p $p"
			done
		} >> "$jobs_file"
	done
done

# JOBS views at a time (qemu-user is slow; the machine has 2 cores).
export -f view block mask_min
export K FP T
while IFS='|' read -r name f ksfiles arch args; do
	printf '%s\0%s\0%s\0%s\0%s\0' "$name" "$f" "$ksfiles" "$arch" "$args"
done < "$jobs_file" |
	xargs -0 -n5 -P"$JOBS" bash -c 'view "$1" "$2" "$3" "$4" $5' _ | sort
