#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# slow_exits_test.sh - kvmscope stat --than (the slow-exit log) and the
# heatmap's counts, against a pairing written here.
#
# The oracle reads `kvmscope dump -t` text only and pairs as perf kvm stat
# does (tools/perf/builtin-kvm.c, the stat engine's comment): per host
# thread, nothing before the thread's first kvm_entry; a kvm_exit opens an
# occurrence (a second one replaces it); the next kvm_entry closes it with
# time entry - exit; an entry with nothing open ends nothing.  It also notes
# the exit's guest rip and the first kvm_mmio / kvm_pio / kvm_msr of the
# thread while the occurrence is open.  For every shared recording and a
# generated one (two VMs, MMIO, port and MSR exits, replaced and unmatched
# events), at 10 us, 100 us and 1 ms, the JSON Lines of stat --than list
# exactly the occurrences the oracle finds above the threshold (time,
# thread, reason, duration, rip, detail), the table lists as many, top
# --than (a replay in intervals) lists the same at 100 us, and the
# oracle's occurrences are as many as stat's samples.  The heatmap's cells
# are where the oracle's occurrences fall (time bin, log2 bucket) and add up
# to stat's samples per reason, and per VM/vCPU/reason with --by.  With
# --guest-kallsyms, the guest symbols are those trace-cmd prints.
set -u
ks=${KVMSCOPE:-build/kvmscope}
gen=${KS_BUILD:-build}/tools/gen-kvm-perfdata
S=${KS_SHARED:-../shared}
T=${KS_TMP:-/tmp}/slow_exits
mkdir -p "$T/fmt/kvm"
if ! command -v python3 > /dev/null; then
	echo "skip slow_exits: needs python3"
	exit 0
fi

# the generated recording: VM 1000 (vCPUs 0, 1), VM 2000 (vCPU 0)
cp tests/fixtures/x86-6.18/kvm_*.format "$T/fmt/kvm/"
python3 - "$T/scn" <<'PY'
import random, sys
random.seed(40)
out = open(sys.argv[1], "w")
threads = [(1001, 1000, 0, "CPU 0/KVM"), (1002, 1000, 1, "CPU 1/KVM"), (2001, 2000, 0, "CPU 0/KVM")]
for tid, pid, v, n in threads:
    out.write("comm %d %d %s\n" % (tid, pid, n))
ev = []
for k, (tid, pid, v, n) in enumerate(threads):
    t = 1000000 + k * 777
    ev.append((t - 500, k, tid, pid, "kvm:kvm_exit exit_reason=1 isa=1 vcpu_id=%d" % v))  # before the first entry
    for i in range(3000):
        ev.append((t, k, tid, pid, "kvm:kvm_entry vcpu_id=%d rip=0x%x" % (v, 0xffffffff81000000 + i)))
        t += random.randint(1000, 40000)
        r = random.choice((12, 30, 31, 48, 49, 1, 32))
        rip = 0xffffffff81000000 + random.randint(0, 1 << 20)
        ev.append((t, k, tid, pid, "kvm:kvm_exit exit_reason=%d isa=1 vcpu_id=%d guest_rip=0x%x" % (r, v, rip)))
        d = int(10 ** random.uniform(2.5, 6.5))
        if r == 30:
            ev.append((t + d // 3, k, tid, pid, "kvm:kvm_pio rw=1 port=0x%x size=1 count=1" % random.choice((0x70, 0x3f8, 0xcf8))))
        elif r in (31, 32):
            ev.append((t + d // 3, k, tid, pid, "kvm:kvm_msr write=%d ecx=0x%x" % (r == 32, random.choice((0x6e0, 0x830, 0x10)))))
        elif r == 49:
            ev.append((t + d // 3, k, tid, pid, "kvm:kvm_mmio type=%d len=4 gpa=0x%x" % (random.choice((1, 2)), 0xfee00000 + 16 * random.randint(0, 64))))
            ev.append((t + d // 2, k, tid, pid, "kvm:kvm_mmio type=2 len=4 gpa=0x1234"))  # not the first
        if i % 97 == 5:   # a second exit replaces the first
            t += d // 4
            ev.append((t, k, tid, pid, "kvm:kvm_exit exit_reason=12 isa=1 vcpu_id=%d guest_rip=0x1" % v))
        t += d
        if i % 89 == 7:   # an entry with nothing open
            ev.append((t, k, tid, pid, "kvm:kvm_entry vcpu_id=%d" % v))
            t += random.randint(1000, 5000)
            ev.append((t, k, tid, pid, "kvm:kvm_exit exit_reason=12 isa=1 vcpu_id=%d guest_rip=0x2" % v))
            t += random.randint(1000, 50000)
    ev.append((t, k, tid, pid, "kvm:kvm_entry vcpu_id=%d" % v))
for e in sorted(ev):
    out.write("%d %d %d %d %s\n" % e)
PY
inputs=""
if "$gen" --formats "$T/fmt" --machine x86_64 --cpuid GenuineIntel,6,85,7 -o "$T/gen.data" "$T/scn" 2> "$T/gen.err"; then
	inputs="$T/gen.data"
else
	echo "not ok slow_exits_generate: $(head -1 "$T/gen.err")"
fi
for f in "$S"/data/hip24/*.trace.dat "$S"/data/*.trace.dat; do
	[ -e "$f" ] && inputs="$inputs $f"
done
[ -d "$S/data/hip24" ] || echo "# note: $S/data is absent: the generated recording only"

cat > "$T/oracle.py" <<'PY'
# oracle.py DUMP: the occurrences of a dump -t text, one JSON per line
import json, re, sys
line_re = re.compile(r"^\s*(.*)-(\d+)\s+\[(\d+)\]\s*(\d+)(?:\.(\d{9}))?: (\w+):\s*(.*)$")
known, pending, out = set(), {}, []
for line in open(sys.argv[1], errors="replace"):
    m = line_re.match(line)
    if not m:
        continue
    tid = int(m.group(2))
    ts = int(m.group(4)) * (10 ** 9 if m.group(5) else 1) + int(m.group(5) or 0)
    ev, text = m.group(6), m.group(7)
    if ev == "kvm_entry":
        if tid not in known:
            known.add(tid)
            continue
        p = pending.pop(tid, None)
        if p and ts >= p["time_ns"]:
            p["duration_ns"] = ts - p["time_ns"]
            out.append(p)
    elif ev == "kvm_exit":
        if tid not in known:
            continue
        r = re.search(r"reason (\S+)", text)
        ip = re.search(r"rip (0x[0-9a-f]+)", text)
        pending[tid] = {"time_ns": ts, "tid": tid, "reason": r.group(1) if r else "?",
                        "guest_ip": ip.group(1) if ip else None, "detail": None}
    elif ev in ("kvm_mmio", "kvm_pio", "kvm_msr") and tid in pending and not pending[tid]["detail"]:
        if ev == "kvm_mmio":
            k = re.search(r"gpa (0x[0-9a-f]+)", text); cls = "mmio"
        elif ev == "kvm_pio":
            k = re.search(r"at (0x[0-9a-f]+)", text); cls = "ioport"
        else:
            k = re.search(r"msr_\w+ ([0-9a-f]+)", text); cls = "msr"
        if k:
            pending[tid]["detail"] = [cls, int(k.group(1), 16)]
for p in out:
    print(json.dumps(p))
PY
cat > "$T/compare.py" <<'PY'
# compare.py ORACLE LOG THRESHOLD_NS TOTAL: log == oracle's occurrences above
import json, sys
th, total = int(sys.argv[3]), int(sys.argv[4])
keys = ("time_ns", "tid", "reason", "duration_ns", "guest_ip", "detail")
occ = [json.loads(l) for l in open(sys.argv[1])]
want = [tuple(json.dumps(o[k]) for k in keys) for o in occ if o["duration_ns"] > th]
got = []
for l in open(sys.argv[2]):
    o = json.loads(l)
    if o.get("type") != "slow_exit":
        continue
    d = o["detail"]
    o["detail"] = [d["class"], d["key"]] if d else None
    got.append(tuple(json.dumps(o[k]) for k in keys))
errs = []
if len(occ) != total:
    errs.append("the oracle pairs %d occurrences, stat counts %d samples" % (len(occ), total))
if sorted(want) != sorted(got):
    w, g = set(want), set(got)
    errs.append("%d logged, %d expected; missing %s; extra %s" %
                (len(got), len(want), sorted(w - g)[:2], sorted(g - w)[:2]))
print("; ".join(errs) if errs else "%d of %d" % (len(got), len(occ)))
sys.exit(1 if errs else 0)
PY
for f in $inputs; do
	b=$(basename "$f")
	"$ks" dump -t "$f" > "$T/$b.dump" 2> /dev/null
	python3 "$T/oracle.py" "$T/$b.dump" > "$T/$b.occ"
	if [ ! -s "$T/$b.occ" ]; then
		# no KVM occurrence: no log line, only the (empty) report as the
		# one JSON line, and exit 0 (an empty answer is an answer)
		"$ks" stat --than 10us --json "$f" > "$T/$b.log" 2> "$T/$b.err"; rc=$?
		if [ $rc -eq 0 ] && [ "$(wc -l < "$T/$b.log")" -eq 1 ] &&
			grep -q '"total_samples":0' "$T/$b.log"; then
			echo "ok slow_exits_none_$b"
		else
			echo "not ok slow_exits_none_$b: status $rc, $(wc -l < "$T/$b.log") lines"
		fi
		continue
	fi
	total=$("$ks" stat --json "$f" | python3 -c 'import json,sys; print(json.load(sys.stdin)["views"][0]["total_samples"])')
	for th in 10us 100us 1ms; do
		case $th in 10us) ns=10000 ;; 100us) ns=100000 ;; 1ms) ns=1000000 ;; esac
		"$ks" stat --than $th --json "$f" > "$T/$b.$th.jsonl" 2> "$T/$b.err"
		"$ks" stat --than $th "$f" > "$T/$b.$th.txt" 2>> "$T/$b.err"
		res=$(python3 "$T/compare.py" "$T/$b.occ" "$T/$b.$th.jsonl" $ns "$total" 2>&1); rc=$?
		n=$(python3 -c 'import sys; print(sum(1 for l in open(sys.argv[1]) if l.startswith("{\"type\":\"slow_exit\"")))' "$T/$b.$th.jsonl")
		tn=$(sed -n 's/^\([0-9]*\) exits\{0,1\} slower than .*/\1/p' "$T/$b.$th.txt")
		[ -n "$tn" ] || { grep -q '^No exit slower than' "$T/$b.$th.txt" && tn=0; }
		if [ $rc -eq 0 ] && [ "${tn:-x}" = "$n" ] &&
		   [ "$(grep -c '^ *[0-9]*\.[0-9]\{9\} ' "$T/$b.$th.txt")" = "$n" ]; then
			echo "ok slow_exits_${b}_$th ($res)"
		else
			echo "not ok slow_exits_${b}_$th: $res; table says ${tn:-nothing}, JSON $n"
		fi
	done
	# top replays the file in intervals: its log is the same
	"$ks" top -b --fast --json --than 100us -i "$f" > "$T/$b.top.jsonl" 2> "$T/$b.err"
	res=$(python3 "$T/compare.py" "$T/$b.occ" "$T/$b.top.jsonl" 100000 "$total" 2>&1) &&
		echo "ok slow_exits_top_$b ($res)" || echo "not ok slow_exits_top_$b: $res"
	# the JSON Lines end with the report, itself one line
	tail -1 "$T/$b.1ms.jsonl" | python3 -c 'import json,sys; j=json.loads(sys.stdin.readline()); assert j["views"]' 2> /dev/null
	[ $? = 0 ] && echo "ok slow_exits_jsonl_$b" || echo "not ok slow_exits_jsonl_$b: the last line is not the report"

	# the heatmap's cells per row = stat's samples per row
	for by in reason vm,vcpu,reason; do
		"$ks" stat --json --by $by --heatmap-json "$T/$b.hm.json" "$f" > "$T/$b.stat.json" 2> "$T/$b.err"
		res=$(python3 - "$T/$b.hm.json" "$T/$b.stat.json" "$T/$b.occ" $by <<'PY' 2>&1
import json, sys
h, s = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
if sys.argv[4] == "reason":
    # every cell where the oracle puts its occurrences: the bin of the
    # exit's time, the bucket of floor(log2(duration))
    want = {}
    for l in open(sys.argv[3]):
        o = json.loads(l)
        d = o["duration_ns"]
        c = (o["reason"], (o["time_ns"] - h["start_ns"]) // h["bin_ns"],
             min(d.bit_length() - 1 if d > 1 else 0, len(h["buckets"]) - 1))
        want[c] = want.get(c, 0) + 1
    got = {(se["key"], c[0], c[1]): c[2] for se in h["series"] for c in se["cells"]}
    if got != want:
        print("cells differ from the oracle's: %s" % sorted(set(got.items()) ^ set(want.items()))[:3])
        sys.exit(1)
rows = {(r["key"], r.get("vm", -1), r.get("vcpu", -1)): r["samples"] for r in s["views"][0]["rows"]}
cells = {}
assert 0 < h["bins"] <= 100, "bins %d" % h["bins"]
for se in h["series"]:
    n = sum(c[2] for c in se["cells"])
    assert n == se["count"], "%s: cells %d, count %d" % (se["key"], n, se["count"])
    assert all(0 <= c[0] < h["bins"] for c in se["cells"]), "cell past the bins"
    cells[(se["key"], se["vm"], se["vcpu"])] = n
if cells != rows:
    print("heatmap %s, stat %s" % (sorted(cells.items())[:3], sorted(rows.items())[:3]))
    sys.exit(1)
print("%d rows, %d samples" % (len(rows), sum(rows.values())))
PY
)
		[ $? = 0 ] && echo "ok slow_exits_heatmap_${b}_$by ($res)" || echo "not ok slow_exits_heatmap_${b}_$by: $res"
	done
done

# --guest-kallsyms: the guest symbols of the tsync guest's exits are the
# ones trace-cmd 3.2 printed on the same kvm_exit lines (report -i host -i
# guest, hip24/expected), the guest's kallsyms taken from its trace.dat
exp=$S/data/hip24/expected/merged-tsync.report-ns.txt.gz
if [ -e "$exp" ] && [ -x "${KS_BUILD:-build}/tools/print-meta" ]; then
	"${KS_BUILD:-build}/tools/print-meta" kallsyms "$S/data/hip24/guest-tsync.trace.dat" > "$T/guest.kallsyms"
	"$ks" stat --than 10us --json --guest-kallsyms "$T/guest.kallsyms" \
		"$S/data/hip24/host-tsync.trace.dat" > "$T/sym.jsonl" 2> "$T/sym.err"
	res=$(python3 - "$T/sym.jsonl" "$exp" <<'PY' 2>&1
import gzip, json, re, sys
want = {}
for line in gzip.open(sys.argv[2], "rt", errors="replace"):
    m = re.match(r"\s*host-tsync\.trace\.dat:\s+.*-483882\s+\[\d+\]\s+(\d+)\.(\d{9}): kvm_exit:.* rip 0x[0-9a-f]+ (\S+) info", line)
    if m:
        want[int(m.group(1)) * 10**9 + int(m.group(2))] = m.group(3)
n, bad = 0, []
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o.get("type") != "slow_exit" or o["tid"] != 483882:
        continue
    n += 1
    if want.get(o["time_ns"]) != o["guest_symbol"]:
        bad.append((o["time_ns"], o["guest_symbol"], want.get(o["time_ns"])))
if bad or not n:
    print("%d of %d differ from trace-cmd's: %s" % (len(bad), n, bad[:3]))
    sys.exit(1)
print("%d exits named as trace-cmd names them" % n)
PY
)
	[ $? = 0 ] && echo "ok slow_exits_guest_symbols ($res)" || echo "not ok slow_exits_guest_symbols: $res"
fi

# more heatmap rows than it keeps (1024): one line naming the file, exit 1
python3 - "$T/many.scn" <<'PY'
out = open(__import__("sys").argv[1], "w")
ev = []
for k in range(70):   # 70 threads x 16 reasons: 1120 VM/vCPU/reason rows
    tid = 3000 + k
    out.write("comm %d %d CPU 0/KVM\n" % (tid, tid))
    for i, r in enumerate((0, 1, 7, 10, 12, 28, 30, 31, 32, 40, 44, 48, 49, 52, 55, 56)):
        t = 1000000 + i * 100000 + k * 100
        ev += [(t, tid, "kvm:kvm_entry vcpu_id=0"),
               (t + 10, tid, "kvm:kvm_exit exit_reason=%d isa=1 vcpu_id=0" % r)]
    ev.append((2000000 + k * 100, tid, "kvm:kvm_entry vcpu_id=0"))
for t, tid, e in sorted(ev):
    out.write("%d 0 %d %d %s\n" % (t, tid, tid, e))
PY
if "$gen" --formats "$T/fmt" --machine x86_64 -o "$T/many.data" "$T/many.scn" 2> "$T/gen.err"; then
	"$ks" stat --by vm,vcpu,reason --heatmap-json "$T/many.json" "$T/many.data" > /dev/null 2> "$T/many.err"; rc=$?
	if [ $rc = 1 ] && [ "$(wc -l < "$T/many.err")" = 1 ] && grep -q "many.data: the heatmap has more than 1024 rows" "$T/many.err" &&
	   [ ! -e "$T/many.json" ]; then
		echo "ok slow_exits_heatmap_too_many_rows"
	else
		echo "not ok slow_exits_heatmap_too_many_rows: status $rc: $(head -2 "$T/many.err")"
	fi
	"$ks" stat --by reason --heatmap-json "$T/many.json" "$T/many.data" > /dev/null 2>&1 &&
		echo "ok slow_exits_heatmap_by_reason_fits" || echo "not ok slow_exits_heatmap_by_reason_fits"
fi

# usage errors: a bad duration, CSV and perf's layout
for args in "stat --than 5parsecs" "stat --than -1ms" "stat --than 1ms --csv" "stat --than 1ms --format perf" \
	    "stat --heatmap-text --json" "top -b --than 1ms --csv" "stat --guest-kallsyms /dev/null"; do
	"$ks" $args -i "$T/gen.data" > /dev/null 2>&1 < /dev/null; rc=$?
	[ $rc = 2 ] && echo "ok slow_exits_usage ($args)" || echo "not ok slow_exits_usage ($args): status $rc, expected 2"
done
exit 0
