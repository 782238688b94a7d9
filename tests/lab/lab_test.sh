#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# lab_test.sh - kvmscope sample / unwind against a real guest (QEMU TCG +
# the Debian kernel pinned in kernel.sha256, see lab.sh).  Run by `make
# check-lab` (tests/run.sh BUILD tests/lab/lab_test.sh) with KVMSCOPE, KS_TMP.
# KS_LAB=0 skips the lab.  Prints ok / not ok / skip lines.
# timeout: 600
#
# Guests: t1 (1 vCPU, default CPU = AMD, no PTI), t2 (1 vCPU,
# Skylake-Client-v1 = PTI), t3 (2 vCPUs).  Each runs labprog's spin and sys
# modes (user chains main;lab_user_a;lab_user_b;lab_user_c and
# main;lab_sys_a;lab_sys_b;lab_sys_c;<kernel read path>).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
KVMSCOPE=${KVMSCOPE:-$root/build/kvmscope}
KS_TMP=${KS_TMP:-$(mktemp -d)}
export LAB_WORK="$KS_TMP/lab"
CTL="$root/tests/lab/labctl.py"

if [ "${KS_LAB:-1}" = 0 ]; then
	echo "skip lab: KS_LAB=0"
	exit 0
fi
[ -x "$KVMSCOPE" ] || { echo "skip lab: no $KVMSCOPE"; exit 0; }
# shellcheck source=tests/lab/lab.sh
. "$root/tests/lab/lab.sh"
if ! lab_setup; then
	echo "skip lab: $LAB_ERR"
	exit 0
fi
echo "# lab kernel: $LAB_KDEB"
trap 'lab_stop t1; lab_stop t2; lab_stop t3' EXIT

ok() { echo "ok $1"; }
nok() { echo "not ok $1: $2"; }

qmp_status() { python3 "$CTL" qmp "$LAB_D/qmp.sock" query-status 2>/dev/null |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])' 2>/dev/null; }

guest_alive() { # NAME: running per QMP and the shell answers on the console
	local s tag="alive-$RANDOM$RANDOM"
	s=$(qmp_status)
	[ "$s" = running ] || { echo "query-status says '$s'"; return 1; }
	python3 "$CTL" console "$LAB_CON" "echo $tag-\$((6*7))" "$tag-42" 20 2>&1 ||
		{ echo "no answer on the console"; return 1; }
}

sample() { # OUTPREFIX ARGS...: run kvmscope sample on the current guest
	local out=$1; shift
	"$KVMSCOPE" sample --gdb "127.0.0.1:$LAB_GDB_PORT" --guest-kallsyms "$LAB_KALLSYMS" \
		--guest-binary "$LAB_PROG" -o "$out.folded" "$@" 2> "$out.err"
}

# Lines that contain the chain NEEDLE (root first, consecutive frames).
has_chain() { grep -q -- "$2" "$1.folded"; }

check_chains() { # NAME OUTPREFIX
	local n=$1 o=$2 bad
	if has_chain "$o" "main;lab_user_a;lab_user_b;lab_user_c"; then ok "$n-user-chain"
	else nok "$n-user-chain" "no main;lab_user_a;lab_user_b;lab_user_c in $o.folded ($(tail -2 "$o.err" | tr '\n' ' '))"; fi
	if has_chain "$o" "main;lab_sys_a;lab_sys_b;lab_sys_c;entry_SYSCALL_64"; then ok "$n-kernel-into-user"
	else nok "$n-kernel-into-user" "no main;lab_sys_a;lab_sys_b;lab_sys_c;entry_SYSCALL_64... in $o.folded"; fi
	# Every chain that holds kernel and user frames crosses at an entry
	# point or an interrupt/exception frame (root-first: first kernel frame):
	# a symbol of the kernel's entry text (__entry_text_start.._end in the
	# guest kallsyms: entry_*, asm_*, error_entry, the iret path...), or
	# ret_from_fork / irq_entries.
	awk '$3 == "__entry_text_start" { s = $1 } $3 == "__entry_text_end" { e = $1 }
	     { a[NR] = $1; n[NR] = $3 }
	     END { for (i = 1; i <= NR; i++) if (a[i] >= s && a[i] < e) print n[i] "_[g.k]" }' \
		"$LAB_KALLSYMS" > "$o.entry"
	printf '%s\n' 'ret_from_fork_[g.k]' 'irq_entries_[g.k]' '[unknown]' '[unknown]_[g.k]' >> "$o.entry"
	bad=$(grep '_\[g.u\];.*_\[g.k\]' "$o.annot" | awk '{
		n = split($0, f, ";"); for (i = 1; i <= n; i++) if (f[i] ~ /_\[g\.k\]/) { sub(/ [0-9]+$/, "", f[i]); print f[i]; break } }' |
		grep -v -x -F -f "$o.entry" | sort | uniq -c | head -3)
	if [ -z "$bad" ] && grep -q '_\[g.u\];.*_\[g.k\]' "$o.annot"; then ok "$n-crossing-at-entry"
	else nok "$n-crossing-at-entry" "kernel chains entered elsewhere: $(echo $bad)"; fi
}

no_write_packets() { # LOGFILE
	python3 - "$1" <<'PY'
import re, sys
data = open(sys.argv[1], "rb").read()
pk = re.findall(rb"\$([^#]*)#[0-9a-fA-F]{2}", data)
bad = [p[:12] for p in pk if p[:1] in (b"M", b"X", b"G", b"P")]
print("%d packets, %d write packets %s" % (len(pk), len(bad), bad[:3]))
sys.exit(1 if bad or not pk else 0)
PY
}

run_guest_tests() { # NAME SMP QEMU-ARGS...
	local n=$1 smp=$2 o
	shift 2
	if ! lab_boot "$n" "$smp" spin,sys "$@"; then
		nok "$n-boot" "$LAB_ERR"
		return 1
	fi
	o="$LAB_D/s"
	sample "$o" -n 300 -F 500 --per-vcpu || { nok "$n-sample" "$(tail -1 "$o.err")"; return 1; }
	"$KVMSCOPE" sample --gdb "127.0.0.1:$LAB_GDB_PORT" --guest-kallsyms "$LAB_KALLSYMS" \
		--guest-binary "$LAB_PROG" -n 150 -F 500 --annotate -o "$o.annot" 2>/dev/null
	check_chains "$n" "$o"
	echo "# $n: $(grep -E 'samples|held' "$o.err" | tr '\n' ' ')"
	# The default reads through the stub's translation; the own page walk
	# (--mem phys) must find the same chains.
	sample "$o.phys" -n 150 -F 500 --mem phys
	if has_chain "$o.phys" "main;lab_user_a;lab_user_b;lab_user_c" &&
	   has_chain "$o.phys" "main;lab_sys_a;lab_sys_b;lab_sys_c;entry_SYSCALL_64"; then
		ok "$n-own-page-walk"
	else nok "$n-own-page-walk" "--mem phys: lab chains missing ($(tail -2 "$o.phys.err" | tr '\n' ' '))"; fi
	if [ "$smp" -gt 1 ]; then
		if grep -q '^vcpu0;.*lab_' "$o.folded" && grep -q '^vcpu1;.*lab_' "$o.folded"; then
			ok "$n-both-vcpus"
		else nok "$n-both-vcpus" "lab chains not seen on vcpu0 and vcpu1"; fi
	fi
	local why
	if why=$(guest_alive); then ok "$n-running-after"; else nok "$n-running-after" "$why"; fi
}

# gdb's bt and kvmscope unwind / sample of one stopped state (user mode).
dump_and_gdb_tests() {
	local d="$LAB_D" try st rip gdbf ours live
	for try in 1 2 3 4 5 6; do
		python3 "$CTL" qmp "$d/qmp.sock" stop >/dev/null
		rm -f "$d/vm.elf"
		python3 "$CTL" qmp "$d/qmp.sock" dump-guest-memory \
			"{\"paging\": false, \"protocol\": \"file:$d/vm.elf\"}" >/dev/null ||
			{ nok t1-dump "dump-guest-memory failed"; python3 "$CTL" qmp "$d/qmp.sock" cont; return; }
		"$KVMSCOPE" unwind --guest-kallsyms "$LAB_KALLSYMS" --guest-binary "$LAB_PROG" \
			"$d/vm.elf" > "$d/unwind.txt" 2> "$d/unwind.err"
		rip=$(awk '/^vcpu 0 rip/ { print $4 }' "$d/unwind.txt")
		# gdb on the same stopped state; 'disconnect' keeps it stopped.
		timeout 60 gdb -nx -batch -ex 'set pagination off' \
			-ex "target remote 127.0.0.1:$LAB_GDB_PORT" -ex bt -ex disconnect \
			"$LAB_PROG" > "$d/gdb.txt" 2>&1
		# kvmscope's first sample is the state the stop left (no resume first).
		"$KVMSCOPE" sample --gdb "127.0.0.1:$LAB_GDB_PORT" --guest-kallsyms "$LAB_KALLSYMS" \
			--guest-binary "$LAB_PROG" -n 1 --stacks "$d/live.txt" -o /dev/null 2>/dev/null
		python3 "$CTL" qmp "$d/qmp.sock" cont >/dev/null 2>&1
		case "$rip" in 0x00000000*) break ;; esac
	done
	# unwind of the dump == the live sample of the same state
	ours=$(grep -E '^  #' "$d/unwind.txt" | awk '{ print $2, $3 }')
	live=$(grep -E '^  #' "$d/live.txt" | awk '{ print $2, $3 }')
	if [ -n "$ours" ] && [ "$ours" = "$live" ]; then ok "t1-unwind-dump-equals-live"
	else nok "t1-unwind-dump-equals-live" "dump: $(echo $ours | head -c 200) / live: $(echo $live | head -c 200)"; fi
	if grep -q 'lab_\|main' "$d/unwind.txt"; then ok "t1-unwind-dump-user-frames"
	else nok "t1-unwind-dump-user-frames" "$(head -c 300 "$d/unwind.txt" "$d/unwind.err")"; fi
	case "$rip" in
	0x00000000*)
		gdbf=$(grep -E '^#[0-9]+ ' "$d/gdb.txt" | sed -E 's/^#[0-9]+ +(0x[0-9a-f]+ in )?([A-Za-z_0-9]+).*/\2/' |
			awk '{ print } /^main$/ { exit }' | tr '\n' ' ')
		ours=$(grep -E '^  #' "$d/unwind.txt" | awk '{ sub(/\+0x.*/, "", $3); print $3 }' |
			awk '{ print } /^main$/ { exit }' | tr '\n' ' ')
		if [ -n "$gdbf" ] && [ "$gdbf" = "$ours" ]; then ok "t1-same-as-gdb-bt"
		else nok "t1-same-as-gdb-bt" "gdb: '$gdbf' kvmscope: '$ours'"; fi ;;
	*) echo "skip t1-same-as-gdb-bt: no user-mode stop in 6 tries (gdb has no kernel symbols)" ;;
	esac
}

long_run_tests() {
	local o="$LAB_D/long" why pid rc
	sample "$o" -n 2000 -F 2000 --log-protocol "$o.proto"
	rc=$?
	echo "# t1 2000 samples: $(grep -E 'samples|held' "$o.err" | tr '\n' ' ')"
	[ $rc -eq 0 ] || nok t1-2000-samples "exit $rc: $(tail -1 "$o.err")"
	if why=$(guest_alive); then ok t1-running-after-2000; else nok t1-running-after-2000 "$why"; fi
	if why=$(no_write_packets "$o.proto"); then ok "t1-no-write-packets ($why)"
	else nok t1-no-write-packets "$why"; fi
	sample "$LAB_D/int" -d 60 -F 200 &
	pid=$!
	sleep 3
	kill -INT "$pid"
	wait "$pid"
	rc=$?
	if [ $rc -eq 0 ] && why=$(guest_alive); then ok t1-running-after-sigint
	else nok t1-running-after-sigint "exit $rc; $why; $(tail -2 "$LAB_D/int.err" | tr '\n' ' ')"; fi
}

# Through a proxy that makes the real stub slow now and then (every 40th
# piece it sends, about one in three samples, arrives 120 ms late): -d 3
# ends within 4 s, no stop of the guest (0x03 to c or D) lasts 300 ms, the
# samples cut short are counted, the late answers do not confuse later
# samples (the lab's user chain still comes out), and the guest runs
# afterwards.  Frame pointers for the kernel: reading the ORC tables
# through this proxy takes longer than -d.
slow_stub_tests() {
	local o="$LAB_D/slow" ppid i t0 t1 rc why wall ab longest
	rm -f "$o.port"
	python3 "$CTL" slowproxy "$o.port" "$LAB_GDB_PORT" 0.12 40 > "$o.proxy" 2> "$o.proxy.err" &
	ppid=$!
	for i in $(seq 100); do [ -s "$o.port" ] && break; sleep 0.05; done
	t0=$EPOCHREALTIME
	"$KVMSCOPE" sample --gdb "127.0.0.1:$(cat "$o.port")" --guest-kallsyms "$LAB_KALLSYMS" \
		--guest-binary "$LAB_PROG" -o "$o.folded" -F 50 -d 3 --kernel-unwind fp 2> "$o.err"
	rc=$?
	t1=$EPOCHREALTIME
	wait "$ppid" 2>/dev/null
	longest=$(cat "$o.proxy")
	wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	echo "# t1 slow stub: $(grep -E 'samples|held' "$o.err" | tr '\n' ' ')"
	if awk -v w="$wall" 'BEGIN { exit !(w < 4.0) }'; then ok "t1-slow-stub-d-honoured ($wall s)"
	else nok t1-slow-stub-d-honoured "-d 3 took $wall s"; fi
	if awk -v m="$longest" 'BEGIN { exit !(m > 0 && m < 0.3) }'; then
		ok "t1-slow-stub-held-within-budget (longest stop $longest s)"
	else nok t1-slow-stub-held-within-budget "longest stop '$longest' s: $(cat "$o.proxy.err")"; fi
	ab=$(grep -oE '[0-9]+ abandoned' "$o.err" | awk '{ print $1 }')
	if [ $rc -eq 0 ] && [ "${ab:-0}" -gt 0 ]; then ok "t1-slow-stub-abandoned-counted ($ab)"
	else nok t1-slow-stub-abandoned-counted "exit $rc, abandoned '${ab:-}': $(tail -3 "$o.err" | tr '\n' ' ')"; fi
	if has_chain "$o" "main;lab_user_a;lab_user_b;lab_user_c"; then ok t1-slow-stub-chains
	else nok t1-slow-stub-chains "no lab chain in $o.folded: $(head -c 300 "$o.folded")"; fi
	if why=$(guest_alive); then ok t1-running-after-slow-stub; else nok t1-running-after-slow-stub "$why"; fi
}

if run_guest_tests t1 1; then
	long_run_tests
	slow_stub_tests
	dump_and_gdb_tests
fi
lab_stop t1
if run_guest_tests t2 1 -cpu Skylake-Client-v1; then
	if python3 "$CTL" console "$LAB_CON" "dmesg | grep -q 'isolation: enabled' && echo PTI-\$((1+1))ON" "PTI-2ON" 20 2>/dev/null; then
		ok t2-guest-uses-pti
	else nok t2-guest-uses-pti "the Skylake guest did not enable page table isolation"; fi
fi
lab_stop t2
run_guest_tests t3 2
lab_stop t3
exit 0
