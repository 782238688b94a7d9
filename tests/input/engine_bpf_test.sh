#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# engine_bpf_test.sh - the BPF engine on this machine's kernel, held by
# tools/engine-hold (the library's engine, no command line around it):
#  - engine_bpf_attached: its programs and links are in the kernel's lists
#    (bpftool prog/link show), one link per kvm:* event plus the exit,
#    entry and nested-marker ones;
#  - engine_bpf_tp_counts_perf: over one run of a real QEMU -accel kvm
#    (SeaBIOS: kvm_emulate_insn, kvm_pio, kvm_userspace_exit...), the
#    engine's count of each kvm:* event for QEMU's process equals
#    `perf stat -e` counting that process alone (its whole life: the same
#    window), while the engine runs (so the engine also must not hide the
#    events from perf);
#  - engine_bpf_sigkill: after kill -9 of the holder, none of its programs
#    and links is in the kernel's lists any more, and nothing was pinned
#    under /sys/fs/bpf;
#  - engine_bpf_not_root: as user nobody, the engine refuses in one line
#    that says why ("not root"), exit 1, nothing else printed.
# Skipped with the engine's reason where BPF cannot load (not root...).
set -u
hold=$KS_BUILD/tools/engine-hold
t=$KS_TMP/engine_bpf
rm -rf "$t"
mkdir -p "$t"
bpftool=$(command -v bpftool || echo /usr/sbin/bpftool)
all="engine_bpf_attached engine_bpf_tp_counts_perf engine_bpf_sigkill engine_bpf_not_root"
skip_all() { for n in $all; do echo "skip $n: $1"; done; exit 0; }

[ -x "$hold" ] || { for n in $all; do echo "not ok $n: $hold not built"; done; exit 0; }
[ -x "$bpftool" ] || skip_all "no bpftool"
# the engine's own verdict on this machine
out=$("$hold" --tracepoints < /dev/null 2>&1)
rc=$?
if ! echo "$out" | grep -q '^ready'; then
	skip_all "$(echo "$out" | head -1)"
elif [ "$rc" != 0 ]; then
	for n in $all; do echo "not ok $n: engine-hold failed after loading: $(echo "$out" | grep -v '^ready' | head -3)"; done
	exit 0
fi

# ids listed by the kernel: "prog ID" / "link ID" lines
kernel_ids() {
	local kind
	for kind in prog link; do
		"$bpftool" -j "$kind" show 2>/dev/null |
			python3 -c 'import json, sys; [print(sys.argv[1], o["id"]) for o in json.load(sys.stdin)]' "$kind"
	done
}
# the holder's ids from its "ready" line, one "prog ID" / "link ID" a line
held_ids() { sed -n 's/^ready //p' "$1" | sed 's/\([a-z]\) /\1=/g' | tr ' ' '\n' | tr '=' ' '; }
# start a holder ($@ its options), stdin open until $t/stop.$1 exists;
# whatever happens, none outlives the test
holders=()
cleanup() {
	touch "$t"/stop.a "$t"/stop.b "$t"/stop.c 2>/dev/null
	for p in "${holders[@]}"; do kill "$p" 2>/dev/null; done
}
trap cleanup EXIT
start_hold() {
	local tag=$1
	shift
	rm -f "$t/stop.$tag"
	{ while [ ! -e "$t/stop.$tag" ]; do sleep 0.1; done; } | "$hold" "$@" > "$t/hold.$tag" 2>&1 &
	holder=$!
	holders+=("$holder")
	# up to 60 s: under the sanitizers on a busy machine it took 10 s
	for _ in $(seq 600); do
		grep -q '^ready' "$t/hold.$tag" && return 0
		kill -0 "$holder" 2>/dev/null || break
		sleep 0.1
	done
	touch "$t/stop.$tag"
	kill "$holder" 2>/dev/null
	return 1
}

# ---- attached: every id in the kernel's lists
n_kvm=$(find /sys/kernel/tracing/events/kvm -mindepth 1 -maxdepth 1 -type d | wc -l)
if start_hold a --tracepoints; then
	held_ids "$t/hold.a" | sort > "$t/held.a"
	kernel_ids | sort > "$t/kernel.a"
	missing=$(comm -23 "$t/held.a" "$t/kernel.a" | tr '\n' ' ')
	nl=$(grep -c '^link' "$t/held.a")
	np=$(grep -c '^prog' "$t/held.a")
	# exit + entry + the nested markers present (x86: 2) + one per event
	nested=0
	for e in kvm_nested_vmexit kvm_nested_vmexit_inject; do
		[ -d "/sys/kernel/tracing/events/kvm/$e" ] && nested=$((nested + 1))
	done
	want=$((n_kvm + 2 + nested))
	if [ -z "$missing" ] && [ "$np" = 4 ] && [ "$nl" = "$want" ]; then
		echo "ok engine_bpf_attached ($np programs, $nl links: $n_kvm kvm:* events + exit, entry, $nested nested)"
	else
		echo "not ok engine_bpf_attached: $np programs (want 4), $nl links (want $want), not in the kernel's lists: '$missing'"
	fi
	touch "$t/stop.a"
	wait "$holder"
else
	echo "not ok engine_bpf_attached: the holder did not start: $(head -3 "$t/hold.a")"
fi

# ---- the tracepoint counts against perf stat, over one QEMU's life
events="kvm_emulate_insn kvm_pio kvm_userspace_exit kvm_fpu kvm_cpuid kvm_msr kvm_mmio kvm_set_irq kvm_pic_set_irq kvm_ioapic_set_irq kvm_apic kvm_eoi kvm_exit kvm_entry kvm_vcpu_wakeup kvm_inj_virq"
qemu=$(command -v qemu-system-x86_64)
if [ ! -w /dev/kvm ]; then
	echo "skip engine_bpf_tp_counts_perf: no writable /dev/kvm"
elif [ -z "$qemu" ] || ! command -v perf > /dev/null; then
	echo "not ok engine_bpf_tp_counts_perf: qemu-system-x86_64 or perf missing (scripts/install-deps.sh)"
elif ! start_hold b --tracepoints; then
	echo "not ok engine_bpf_tp_counts_perf: the holder did not start: $(head -3 "$t/hold.b")"
else
	list=$(for e in $events; do [ -d "/sys/kernel/tracing/events/kvm/$e" ] && printf 'kvm:%s,' "$e"; done)
	perf stat -x, -e "${list%,}" -- sh -c 'echo $$ > "$1"; exec "$2" -accel kvm -cpu qemu64 -m 64 \
		-name bpftest,debug-threads=on -display none -nodefaults -no-user-config' \
		sh "$t/qemu.pid" "$qemu" > /dev/null 2> "$t/perf.csv" &
	perfpid=$!
	for _ in $(seq 50); do [ -s "$t/qemu.pid" ] && break; sleep 0.1; done
	qpid=$(cat "$t/qemu.pid" 2>/dev/null)
	# QEMU's vCPU runs (its thread "CPU 0/KVM" exists: a loaded machine
	# may take seconds to get there), then 2 s of SeaBIOS
	for _ in $(seq 300); do
		grep -qx 'CPU 0/KVM' /proc/"$qpid"/task/*/comm 2>/dev/null && break
		kill -0 "$qpid" 2>/dev/null || break
		sleep 0.1
	done
	sleep 2
	[ -n "$qpid" ] && kill "$qpid" 2>/dev/null
	wait "$perfpid"
	# QEMU is gone: nothing more of its process can be counted
	touch "$t/stop.b"
	wait "$holder"
	awk -F, '$3 ~ /^kvm:/ && $1 ~ /^[0-9]+$/ && $1 > 0 { sub("kvm:", "", $3); print $3, $1 }' \
		"$t/perf.csv" | sort > "$t/perf.txt"
	awk -v p="$qpid" -v evs=" $events " '$1 == "tp" && $2 == p && index(evs, " " $3 " ") { print $3, $4 }' \
		"$t/hold.b" | sort > "$t/bpf.txt"
	n=$(wc -l < "$t/perf.txt")
	emu=$(awk '$1 == "kvm_emulate_insn" { print $2 }' "$t/perf.txt")
	if [ "$n" -ge 3 ] && [ "${emu:-0}" -gt 1000 ] && cmp -s "$t/perf.txt" "$t/bpf.txt"; then
		echo "ok engine_bpf_tp_counts_perf ($n events equal, kvm_emulate_insn $emu)"
	else
		echo "not ok engine_bpf_tp_counts_perf: perf stat (left) and the engine (right) differ, or too few events ($n, kvm_emulate_insn ${emu:-0}):"
		diff "$t/perf.txt" "$t/bpf.txt" | head -20 | sed 's/^/#   /'
		# perf at 0 beside the engine's counts: some BPF program on these
		# tracepoints returns 0, which hides them from perf
		"$bpftool" perf show 2>/dev/null | grep -c 'tracepoint  kvm_' | sed 's/^/#   BPF programs on kvm tracepoints: /'
		grep -v '^0,' "$t/perf.csv" | head -5 | sed 's/^/#   perf: /'
	fi
fi

# ---- SIGKILL leaves nothing attached, nothing pinned
pinned_before=$(find /sys/fs/bpf -mindepth 1 2>/dev/null | sort)
if start_hold c --tracepoints; then
	held_ids "$t/hold.c" | sort > "$t/held.c"
	kernel_ids | sort > "$t/kernel.c1"
	present=$(comm -12 "$t/held.c" "$t/kernel.c1" | wc -l)
	# $! of a pipeline is its last process: the holder itself
	kill -9 "$holder"
	touch "$t/stop.c"
	wait "$holder" 2>/dev/null
	# the kernel frees programs after an RCU grace period: allow it 10 s
	left=x
	for _ in $(seq 100); do
		kernel_ids | sort > "$t/kernel.c2"
		left=$(comm -12 "$t/held.c" "$t/kernel.c2" | tr '\n' ' ')
		[ -z "$left" ] && break
		sleep 0.1
	done
	pinned_after=$(find /sys/fs/bpf -mindepth 1 2>/dev/null | sort)
	total=$(wc -l < "$t/held.c")
	if [ "$present" = "$total" ] && [ "$total" -gt 4 ] && [ -z "$left" ] &&
		[ "$pinned_before" = "$pinned_after" ]; then
		echo "ok engine_bpf_sigkill ($total programs and links listed while held, none after kill -9; nothing pinned)"
	else
		echo "not ok engine_bpf_sigkill: $present of $total listed while held; still listed after kill -9: '$left'; pinned before '$pinned_before', after '$pinned_after'"
	fi
else
	echo "not ok engine_bpf_sigkill: the holder did not start: $(head -3 "$t/hold.c")"
fi

# ---- not root: one line saying why
if ! command -v setpriv > /dev/null; then
	echo "not ok engine_bpf_not_root: no setpriv (util-linux)"
else
	d=$(mktemp -d /tmp/engine_bpf.XXXXXX)
	cp "$hold" "$d/engine-hold"
	chmod 755 "$d" "$d/engine-hold"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$d/engine-hold" --tracepoints \
		< /dev/null > "$t/nobody.out" 2> "$t/nobody.err"
	rc=$?
	rm -rf "$d"
	if [ "$rc" = 1 ] && [ ! -s "$t/nobody.out" ] && [ "$(wc -l < "$t/nobody.err")" = 1 ] &&
		grep -q "BPF engine unavailable: not root" "$t/nobody.err"; then
		echo "ok engine_bpf_not_root ($(cat "$t/nobody.err"))"
	else
		echo "not ok engine_bpf_not_root: exit $rc, stderr '$(head -3 "$t/nobody.err")', stdout '$(head -3 "$t/nobody.out")'"
	fi
fi
