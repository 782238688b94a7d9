#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# vmgexit_test.sh - confidential guests: kvmscope stat --event vmgexit names
# every VMGEXIT software exit code (SVM_VMGEXIT_* of the uapi svm.h), the
# regular SVM exit codes a GHCB carries and the GHCB MSR protocol requests
# (sev-common.h), per VM, and says which VMs are confidential.
#
# Input: tools/gen-kvm-perfdata with the real kvm formats of a Linux 6.2
# host (tests/fixtures/x86-6.2: kvm_vmgexit_enter/_exit,
# kvm_vmgexit_msr_protocol_enter) and a scenario of tests/cli/beyond_oracle.py,
# which replays it with names taken from the headers in $KS_LINUX.
set -u
K=${KVMSCOPE:?}
GEN=${KS_BUILD:?}/tools/gen-kvm-perfdata
T=${KS_TMP:?}/vmgexit
ORACLE="python3 tests/cli/beyond_oracle.py"
mkdir -p "$T"

if [ ! -f "${KS_LINUX:-}/arch/x86/include/asm/sev-common.h" ]; then
	echo "skip vmgexit: no kernel headers in KS_LINUX"
	exit 0
fi
$ORACLE vmgexit "$T/g.scn" "$T/g.exp"
"$GEN" --formats tests/fixtures/x86-6.2 --machine x86_64 --cpuid AuthenticAMD,25,1,1 -o "$T/g.data" "$T/g.scn" ||
	{ echo "not ok vmgexit: generator failed"; exit 0; }
if "$K" stat "$T/g.data" --event vmgexit --by vm,reason --json > "$T/g.json" 2>"$T/err"; then
	r=$($ORACLE check "$T/g.exp" "$T/g.json")
	[ "$r" = OK ] && echo "ok vmgexit rows per VM and sub-reason, confidential VMs" ||
		echo "not ok vmgexit rows: $(echo "$r" | head -3 | tr '\n' ' ')"
else
	echo "not ok vmgexit rows: $(head -1 "$T/err")"
fi
# one check per software exit code: its row has the replay's count
"$K" stat "$T/g.data" --event vmgexit --json > "$T/all.json" 2>/dev/null
python3 - "$T/g.exp" "$T/all.json" <<'PY'
import json, sys
exp = json.load(open(sys.argv[1]))
got = {r['key']: r['samples'] for r in json.load(open(sys.argv[2]))['views'][0]['rows']}
for k, v in sorted(exp.items()):
    if k.startswith('500|vmgexit'):
        name = k.split('|')[1]
        print('%s vmgexit %s: %d%s' % ('ok' if got.get(name) == v[0] else 'not ok', name, v[0],
                                        '' if got.get(name) == v[0] else ', got %s' % got.get(name)))
PY
# the text report says which VM is confidential, and only that one
"$K" stat "$T/g.data" --event vmgexit > "$T/g.txt"
l=$(grep '^Confidential guests' "$T/g.txt")
[ "$l" = "Confidential guests (state protected, exits through VMGEXIT): VM 500 (sev-guest)" ] &&
	echo "ok the text names the confidential VM" || echo "not ok confidential line: '$l'"
# the vmexit view (perf's) still shows one opaque vmgexit row
n=$("$K" stat "$T/g.data" --json | python3 -c 'import json,sys; print([r["samples"] for r in json.load(sys.stdin)["views"][0]["rows"] if r["key"]=="vmgexit"])')
w=$(python3 -c 'import json,sys; e=json.load(open(sys.argv[1])); print([sum(v[0] for k,v in e.items() if k.startswith("500|vmgexit"))])' "$T/g.exp")
[ "$n" = "$w" ] && echo "ok vmexit view keeps perf's vmgexit row" || echo "not ok vmexit view: $n, want $w"
# report: the confidential VM's exits (rip 0) say "guest state protected",
# the plain VM's unresolved ones stay [unknown]
"$K" report "$T/g.data" --json > "$T/rep.json" 2>"$T/err" || echo "not ok report: $(head -1 "$T/err")"
python3 - "$T/g.exp" "$T/rep.json" <<'PY'
import json, sys
exp = json.load(open(sys.argv[1]))
rep = json.load(open(sys.argv[2]))
want_p = sum(v[0] for k, v in exp.items() if k.startswith('500|'))
want_u = sum(v[0] for k, v in exp.items() if k.startswith('600|'))
got = {r['symbol']: r['samples'] for r in rep['rows']}
ok = got.get('[guest state protected]') == want_p and got.get('[unknown]') == want_u
print('%s report says guest state protected for %d exits, [unknown] for %d: %s' %
      ('ok' if ok else 'not ok', want_p, want_u, got))
print('%s report confidential_vms %s' % ('ok' if rep.get('confidential_vms') == [500] else 'not ok',
                                         rep.get('confidential_vms')))
PY
"$K" report "$T/g.data" | grep -q '^# Confidential guests (state protected, exits through VMGEXIT, no guest address): VM 500$' &&
	echo "ok report text names the confidential VM" || echo "not ok report text: no confidential line"
# timeline: the confidential VM's vCPUs say so, the plain VM's do not
"$K" timeline "$T/g.data" > "$T/tl.txt" 2>"$T/err" || echo "not ok timeline: $(head -1 "$T/err")"
p=$(grep -c '^VM 500(sev-guest) (confidential: guest state protected) vCPU' "$T/tl.txt")
q=$(grep -c '^VM 600(plain-guest) vCPU' "$T/tl.txt")
[ "$p" = 2 ] && [ "$q" = 1 ] && echo "ok timeline marks the confidential VM's 2 vCPUs only" ||
	echo "not ok timeline: $p confidential vCPU lines, $q plain"
