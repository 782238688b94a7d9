#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# sample_stub_test.sh - kvmscope sample against a fake QEMU-like gdbstub on
# 127.0.0.1 (fake_gdbstub.py): the stacks it plants come out, and with a
# slow stub the time budgets hold (-d, --sample-budget), abandoned samples
# are counted, late answers never pass for new ones, and the guest is left
# running.  Run by tests/run.sh with KVMSCOPE and KS_TMP.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
KVMSCOPE=${KVMSCOPE:-$root/build/kvmscope}
KS_TMP=${KS_TMP:-$(mktemp -d)}
d="$KS_TMP/sample_stub"
stub_py="$root/tests/cli/fake_gdbstub.py"
mkdir -p "$d"

ok() { echo "ok $1"; }
nok() { echo "not ok $1: $2"; }

command -v python3 >/dev/null || { echo "skip sample-stub: no python3"; exit 0; }

# The planted chain (fake_gdbstub.py), root first, in kallsyms terms.
cat > "$d/kallsyms" <<'EOF'
ffffffff81000000 T _stext
ffffffff81001000 T func_c
ffffffff81002000 T func_b
ffffffff81003000 T func_a
ffffffff81004000 T _etext
EOF
chain="func_a;func_b;func_c"

stub_pid=""
start_stub() { # NAME STUB-ARGS...: start the stub, sets PORT
	local n=$1 i
	shift
	rm -f "$d/$n.port" "$d/$n.log"
	python3 "$stub_py" "$d/$n.port" "$d/$n.log" "$@" 2> "$d/$n.stub.err" &
	stub_pid=$!
	for i in $(seq 100); do
		[ -s "$d/$n.port" ] && break
		sleep 0.05
	done
	PORT=$(cat "$d/$n.port" 2>/dev/null)
	[ -n "$PORT" ]
}

wait_stub() { # NAME: the stub ends when the client has gone; its log is then there
	local i
	for i in $(seq 100); do
		[ -s "$d/$1.log" ] && break
		sleep 0.05
	done
	kill "$stub_pid" 2>/dev/null
	wait "$stub_pid" 2>/dev/null
}

run_sample() { # NAME ARGS...: kvmscope sample on the stub; sets RC and WALL (s)
	local n=$1 t0 t1
	shift
	t0=$EPOCHREALTIME
	"$KVMSCOPE" sample --gdb "127.0.0.1:$PORT" --kernel-unwind fp \
		--guest-kallsyms "$d/kallsyms" -o "$d/$n.folded" "$@" 2> "$d/$n.err"
	RC=$?
	t1=$EPOCHREALTIME
	WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
}

# stub_log NAME EXPR: a value from the stub's log (holds: [start, end, how,
# c or D]; intr: the stops by 0x03, byc: those that a 'c' ended).
stub_log() {
	python3 - "$d/$1.log" "$2" <<'PY'
import json, sys
log = json.load(open(sys.argv[1]))
holds = log["holds"]
intr = [h for h in holds if h[2] == "interrupt"]
byc = [h for h in intr if h[1] is not None and h[3] == "c"]
v = eval(sys.argv[2])
print(" ".join(map(str, v)) if isinstance(v, tuple) else v)
PY
}

num() { # NAME REGEX: the number in front of REGEX in NAME.err (0 if absent)
	grep -oE "[0-9]+ $2" "$d/$1.err" | head -1 | awk '{ print $1 }' | grep . || echo 0
}

# 1. A stub of normal speed: every sample of every vCPU is the planted chain.
# (A budget of a second: a loaded test machine must not make it a slow one.)
n=normal
if start_stub $n --vcpus 2; then
	run_sample $n -F 50 -n 20 --sample-budget 1000
	wait_stub $n
	want="$chain 40"
	if [ $RC -eq 0 ] && [ "$(cat "$d/$n.folded")" = "$want" ]; then ok "sample-stub-normal-chains"
	else nok "sample-stub-normal-chains" "exit $RC, folded '$(head -c 200 "$d/$n.folded")', want '$want'; $(tail -2 "$d/$n.err" | tr '\n' ' ')"; fi
	if grep -q abandoned "$d/$n.err"; then nok "sample-stub-normal-none-abandoned" "$(head -1 "$d/$n.err")"
	else ok "sample-stub-normal-none-abandoned"; fi
	# the first sample is the stop of the connection; the detach stops once more
	e=$(stub_log $n 'len(log["errors"]), log["running_at_end"], len(byc), len(intr)')
	if [ "$e" = "0 True 19 20" ]; then ok "sample-stub-normal-protocol"
	else nok "sample-stub-normal-protocol" "errors, running at end, stops ended by c, all: $e (want 0 True 19 20)"; fi
else
	nok "sample-stub-normal" "the fake stub did not start: $(cat "$d/$n.stub.err")"
fi

# 2. The issue's stub (every answer 1.9 s late, --timeout 2000): -d 2 ends
# within 3 s although the handshake cannot be done, and the guest runs after.
n=allslow
if start_stub $n --vcpus 4 --delay 1.9 --slow-from connect; then
	run_sample $n -F 50 -d 2
	wait_stub $n
	if awk -v w="$WALL" 'BEGIN { exit !(w < 3.0) }'; then ok "sample-stub-allslow-d-honoured ($WALL s)"
	else nok "sample-stub-allslow-d-honoured" "-d 2 took $WALL s"; fi
	if [ $RC -eq 1 ] && grep -q -- '-d 2 s ran out before the setup was done' "$d/$n.err"; then
		ok "sample-stub-allslow-says-why"
	else nok "sample-stub-allslow-says-why" "exit $RC: $(tr '\n' ' ' < "$d/$n.err")"; fi
	e=$(stub_log $n 'log["running_at_end"], len(log["errors"])')
	if [ "$e" = "True 0" ]; then ok "sample-stub-allslow-guest-running"
	else nok "sample-stub-allslow-guest-running" "running at end, errors: $e; $(stub_log $n 'log["errors"][:3]')"; fi
else
	nok "sample-stub-allslow" "the fake stub did not start"
fi

# 3. Slow from the first sample on (4 vCPUs, answers 1.9 s late): every
# sample after the first runs out of its 50 ms budget.  -d 2 ends within
# 3 s, no stop of the guest (0x03 to 'c' at the stub) lasts 300 ms, every
# interrupt is a sample counted as abandoned, the guest runs at the end
# (but the detach's answer came too late to know it: exit 1).
n=slow
if start_stub $n --vcpus 4 --delay 1.9 --slow-from continue; then
	run_sample $n -F 50 -d 2
	wait_stub $n
	if awk -v w="$WALL" 'BEGIN { exit !(w < 3.0) }'; then ok "sample-stub-slow-d-honoured ($WALL s)"
	else nok "sample-stub-slow-d-honoured" "-d 2 took $WALL s"; fi
	longest=$(stub_log $n 'max([h[1] - h[0] for h in intr if h[1] is not None] or [0])')
	open=$(stub_log $n 'sum(1 for h in intr if h[1] is None)')
	if awk -v m="$longest" 'BEGIN { exit !(m < 0.3) }' && [ "$open" = 0 ]; then
		ok "sample-stub-slow-held-within-budget (longest stop $longest s)"
	else nok "sample-stub-slow-held-within-budget" "longest stop $longest s, $open left stopped"; fi
	ab=$(num $n 'abandoned'); got=$(num $n 'samples of'); intr=$(stub_log $n 'len(byc)')
	# the detach's answer cannot come within -d's grace: the run cannot
	# know the guest runs again, and says so (exit 1, section 5)
	if [ $RC -eq 1 ] && [ "$ab" -gt 0 ] && [ "$got" = 1 ] && [ "$ab" = "$intr" ] &&
	   grep -q 'detach failed: .*the guest may still be stopped' "$d/$n.err"; then
		ok "sample-stub-slow-abandoned-counted ($ab)"
	else nok "sample-stub-slow-abandoned-counted" "exit $RC, $got samples, $ab abandoned, $intr stops ended by c at the stub: $(head -2 "$d/$n.err" | tr '\n' ' ')"; fi
	if [ "$(cat "$d/$n.folded")" = "$chain 4" ]; then ok "sample-stub-slow-only-whole-samples"
	else nok "sample-stub-slow-only-whole-samples" "folded: $(head -c 300 "$d/$n.folded")"; fi
	e=$(stub_log $n 'log["running_at_end"], len(log["errors"])')
	if [ "$e" = "True 0" ]; then ok "sample-stub-slow-guest-running"
	else nok "sample-stub-slow-guest-running" "running at end, errors: $e; $(stub_log $n 'log["errors"][:3]')"; fi
else
	nok "sample-stub-slow" "the fake stub did not start"
fi

# 4. Now and then a late answer (every 23rd, 120 ms): the samples it cuts
# are abandoned, and the late answers, read afterwards, never pass for
# the answers to later packets: every stack kept is the planted one.
n=jitter
if start_stub $n --vcpus 2 --delay 0.12 --slow-every 23; then
	run_sample $n -F 50 -n 60 --timeout 1000
	wait_stub $n
	ab=$(num $n 'abandoned'); got=$(num $n 'samples of'); intr=$(stub_log $n 'len(byc)')
	want="$chain $((got * 2))"
	if [ $RC -eq 0 ] && [ "$ab" -gt 0 ] && [ "$got" -gt 0 ] && [ $((got + ab)) = 60 ] &&
	   [ "$intr" = 59 ] && [ "$(cat "$d/$n.folded")" = "$want" ]; then
		ok "sample-stub-jitter-in-step ($got kept, $ab abandoned)"
	else nok "sample-stub-jitter-in-step" "exit $RC, $got samples + $ab abandoned (want 60), $intr stops ended by c (want 59), folded '$(head -c 300 "$d/$n.folded")' want '$want'; $(tail -3 "$d/$n.err" | tr '\n' ' ')"; fi
	longest=$(stub_log $n 'max([h[1] - h[0] for h in intr if h[1] is not None] or [0])')
	e=$(stub_log $n 'log["running_at_end"], len(log["errors"]), sum(1 for h in intr if h[1] is None)')
	if awk -v m="$longest" 'BEGIN { exit !(m < 0.3) }' && [ "$e" = "True 0 0" ]; then
		ok "sample-stub-jitter-guest-released (longest stop $longest s)"
	else nok "sample-stub-jitter-guest-released" "longest stop $longest s; running, errors, open stops: $e; $(stub_log $n 'log["errors"][:3]')"; fi
else
	nok "sample-stub-jitter" "the fake stub did not start"
fi
# 5. A stub that never answers the detach: the guest may still be
# stopped, and the run says so (exit 1, with how to resume it: QMP
# 'cont'); the samples taken are still written.  It exited 0.
n=nodetach
if start_stub $n --no-detach-reply; then
	run_sample $n -F 50 -n 5 --timeout 300
	wait_stub $n
	e=$(stub_log $n 'log["running_at_end"]')
	if [ $RC -eq 1 ] && [ "$e" = False ] &&
	   grep -q "^kvmscope: detach failed: .*the guest may still be stopped; resume it with QMP 'cont'" "$d/$n.err" &&
	   [ "$(cat "$d/$n.folded")" = "$chain 5" ]; then
		ok "sample-stub-detach-unanswered"
	else nok "sample-stub-detach-unanswered" "exit $RC, stub running at end: $e, folded '$(head -c 100 "$d/$n.folded")': $(tail -3 "$d/$n.err" | tr '\n' ' ')"; fi
else
	nok "sample-stub-detach-unanswered" "the fake stub did not start"
fi
exit 0
