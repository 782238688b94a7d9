#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# testarch_test.sh - an architecture is one file: a test-only one works in
# every command.
#
# build/tests/arch/kvmscope-testarch is kvmscope linked with
# tests/arch/testarch.c, which defines "testarch" (made-up events
# testkvm:guest_enter / guest_exit, exit codes 1 TICK periodic, 2 IO, 3 NAP
# halts, 4 CALL) and the list of architectures with it.  On a perf.data of
# those events (tools/gen-kvm-perfdata, formats in tests/fixtures/testarch):
# stat names the exits from the table (also on the events as ftrace text,
# read with the formats of the table), report samples the periodic exits
# only, timeline shows the NAP exit as HALTED, every command maps threads to
# the same VM and vCPU, and the help lists the architecture.  The expected
# numbers follow from the scenario below (durations written out).
set -u
K=${KS_BUILD:?}/tests/arch/kvmscope-testarch
GEN=${KS_BUILD:?}/tools/gen-kvm-perfdata
T=${KS_TMP:?}/testarch
J="python3 tests/cli/host_model_json.py"
mkdir -p "$T"
if [ ! -x "$K" ]; then
	echo "skip testarch: $K not built (make tests)"
	exit 0
fi
# vCPU 0: TICK 2000..2300 (300 ns), IO 9500..9900 (400 ns);
# vCPU 1: NAP 3000..9000 (6000 ns, halted).
cat > "$T/ta.scn" <<'SCN'
comm 100 100 vm-test
comm 201 100 CPU 0/KVM
comm 202 100 CPU 1/KVM
1000 0 201 100 testkvm:guest_enter cpu_no=0
1100 1 202 100 testkvm:guest_enter cpu_no=1
2000 0 201 100 testkvm:guest_exit cpu_no=0 why=1 where=0xffffffff81000010
2300 0 201 100 testkvm:guest_enter cpu_no=0
3000 1 202 100 testkvm:guest_exit cpu_no=1 why=3 where=0xffffffff81000020
9000 1 202 100 testkvm:guest_enter cpu_no=1
9500 0 201 100 testkvm:guest_exit cpu_no=0 why=2 where=0x400000
9900 0 201 100 testkvm:guest_enter cpu_no=0
SCN
F="$T/ta.data"
if ! "$GEN" --formats tests/fixtures/testarch --machine testarch -o "$F" "$T/ta.scn"; then
	echo "not ok testarch: generator failed"
	exit 0
fi

r=$("$K" stat -i "$F" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
rows = {r["key"]: r["total_ns"] for r in d["views"][0]["rows"]}
print(d["arch"], sorted(rows.items()))')
[ "$r" = "testarch [('IO', 400), ('NAP', 6000), ('TICK', 300)]" ] &&
	echo "ok testarch stat: names and times from the table" || echo "not ok testarch stat: $r"

# The same events as ftrace text (dump prints trace-cmd report's layout):
# the text reader takes testkvm's formats from the table too.
"$K" dump -t "$F" > "$T/ta.txt"
r=$("$K" stat -i "$T/ta.txt" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
rows = {r["key"]: r["total_ns"] for r in d["views"][0]["rows"]}
print(d["arch"], sorted(rows.items()))')
[ "$r" = "testarch [('IO', 400), ('NAP', 6000), ('TICK', 300)]" ] &&
	echo "ok testarch stat of the text: formats from the table" ||
	echo "not ok testarch stat of the text: $r"

r=$("$K" report -i "$F" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d["samples"], d["exits"], sorted(r["reason"] for r in d["exits_by_guest_code"]))')
[ "$r" = "1 3 ['IO', 'NAP', 'TICK']" ] &&
	echo "ok testarch report: only the periodic exit is a sample" || echo "not ok testarch report: $r"

"$K" report -i "$F" --sample-exits NAP --json > "$T/r2.json" 2> "$T/err"
r=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["samples"])' "$T/r2.json" 2>/dev/null)
[ "$r" = 1 ] && echo "ok testarch report --sample-exits NAP (name from the table)" ||
	echo "not ok testarch report --sample-exits: $r $(head -1 "$T/err")"

"$K" timeline -q -i "$F" --json "$T/tl.json"
r=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(sorted((e["name"], e["dur"]) for e in d["traceEvents"]
             if e.get("ph") == "X" and e["name"].startswith(("HALTED", "HOST"))))' "$T/tl.json")
[ "$r" = "[('HALTED NAP', 6.0), ('HOST IO', 0.4), ('HOST TICK', 0.3)]" ] &&
	echo "ok testarch timeline: NAP halts, names from the table" || echo "not ok testarch timeline: $r"

"$K" stat -i "$F" --json > "$T/stat.json"
"$K" report -i "$F" --json > "$T/report.json"
"$K" pmu -i "$F" --json > "$T/pmu.json"
$J threads "$T/stat.json" > "$T/stat.map"
ok=1
for c in report tl pmu; do
	$J threads "$T/$c.json" > "$T/$c.map"
	cmp -s "$T/stat.map" "$T/$c.map" || { ok=; echo "not ok testarch threads: $c differs from stat"; }
done
[ -n "$ok" ] && grep -q "^202 vm=100 vcpu=1 vm_name=vm-test$" "$T/stat.map" &&
	echo "ok testarch threads: every command says 202 is vCPU 1 of vm-test"

"$K" stat --help 2>&1 | grep -q "loongarch or testarch" &&
	echo "ok testarch listed by stat --help" || echo "not ok testarch: stat --help does not list it"
# to the real kvmscope these are no KVM events: an empty answer (as perf
# answers a file without kvm events), which says so
"$KVMSCOPE" stat -i "$F" > "$T/real.out" 2> "$T/real.err"
if grep -q "no KVM events" "$T/real.err" && grep -q '^Total: 0 samples' "$T/real.out"; then
	echo "ok testarch unknown to the real kvmscope"
else
	echo "not ok testarch: the real kvmscope knows testarch: $(head -1 "$T/real.err")"
fi
