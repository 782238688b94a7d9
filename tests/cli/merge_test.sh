#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# merge_test.sh - `kvmscope merge` must print what trace-cmd prints when it
# merges a host and a guest trace.
#
# Oracles:
#  - hip24/expected/merged-tsync.report-ns.txt.gz: trace-cmd 3.2's
#    `trace-cmd report -t -i host-tsync.trace.dat -i guest-tsync.trace.dat`
#    (TimeShift sync, file prefixes, guest symbols after kvm_entry/exit rip):
#    every line must be identical, in the same order.
#  - the recording's own physics: every synced guest event lies between a
#    kvm_entry and the next kvm_exit of its vCPU thread, except the events
#    before the host trace starts (the issue's sanity rule): --quality must
#    report 0 outside.
#  - --json carries the text output's events, one for one in the same order
#    (each event's text is its line without the file prefix), and puts the
#    guest's events in the VM that kvmscope stat gives the guest's vCPU
#    thread, named alike (host_model_test.sh compares its "threads"); the
#    --quality line names that VM alike.
set -u
ks=$KVMSCOPE
hip=$KS_SHARED/data/hip24
dir=$KS_TMP/merge-test
mkdir -p "$dir"
printf 'leak:libtraceevent.so\n' > "$dir/lsan.supp"
export LSAN_OPTIONS="suppressions=$dir/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

host=$hip/host-tsync.trace.dat guest=$hip/guest-tsync.trace.dat
exp=$hip/expected/merged-tsync.report-ns.txt.gz
if [ ! -r "$host" ] || [ ! -r "$guest" ] || [ ! -r "$exp" ]; then
	echo "skip merge_tsync_oracle: hip24 tsync recordings are absent"
	echo "skip merge_quality: hip24 tsync recordings are absent"
else
	zcat "$exp" > "$dir/want"
	if ! "$ks" merge -t --quality -i "$host" -i "$guest" > "$dir/got" 2> "$dir/err"; then
		echo "not ok merge_tsync_oracle: exit status: $(head -1 "$dir/err")"
	else
		bad=$(diff "$dir/want" "$dir/got" | grep -c '^<')
		total=$(wc -l < "$dir/want")
		if [ "$bad" -eq 0 ] && [ "$total" -eq "$(wc -l < "$dir/got")" ]; then
			echo "ok merge_tsync_oracle ($total lines identical, same order)"
		else
			echo "not ok merge_tsync_oracle: $bad of $total lines differ; first: $(diff "$dir/want" "$dir/got" | sed -n 2p)"
		fi
		q=$(grep '^sync quality' "$dir/err")
		checked=$(sed -E 's/.*: ([0-9]+) guest events checked.*/\1/' <<< "$q")
		outside=$(sed -E 's/.* ([0-9]+) outside.*/\1/' <<< "$q")
		guest_lines=$(grep -c '^guest-tsync.trace.dat: ' "$dir/want")
		# every guest event line is checked (the header line "cpus=1" is not an event)
		if [ "$outside" = 0 ] && [ "$checked" = $((guest_lines - 1)) ]; then
			echo "ok merge_quality ($q)"
		else
			echo "not ok merge_quality: $q (guest events in the oracle: $((guest_lines - 1)))"
		fi
	fi
	# --json: the same events as the text, with the host model's VM
	if "$ks" merge -t --json -i "$host" -i "$guest" > "$dir/merged.json" 2> "$dir/err" &&
	   "$ks" stat -i "$host" --json > "$dir/host.stat.json" 2>> "$dir/err"; then
		r=$(python3 - "$dir/merged.json" "$dir/got" "$dir/host.stat.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
names = [i["name"] for i in d["inputs"]]
w = max(len(n) for n in names)
# the text: a "cpus=N" line per input, then the events
lines = open(sys.argv[2]).read().splitlines()[len(names):]
# a text of several lines (9p_protocol_dump) has the prefix on its first
want = "\n".join("%*s: %s" % (w, names[e["input"]], e["text"]) for e in d["events"]).split("\n")
if want != lines:
    bad = next(i for i, (a, b) in enumerate(zip(want + [""], lines + [""])) if a != b)
    print("events differ from the text at event %d: %r / %r" % (bad, (want + [""])[bad], (lines + [""])[bad]))
    sys.exit()
stat = {t["tid"]: t for t in json.load(open(sys.argv[3]))["threads"]}
g = d["inputs"][1]
tids = {v["vcpu"]: v["host_tid"] for v in g["vcpus"]}
bad = [e for e in d["events"] if e["input"] == 1 and "vm" in e and
       (e["vm"] != stat[tids[e["vcpu"]]]["vm"] or e["vm_name"] != stat[tids[e["vcpu"]]]["vm_name"])]
n = sum(1 for e in d["events"] if e["input"] == 1 and "vm" in e)
if bad or not n:
    print("%d of %d guest events in another VM than stat's: %r" % (len(bad), n, bad[:1]))
elif g["sync"] != "timeshift" or not g["vcpus"][0]["clock_offsets"]:
    print("guest sync %r, offsets %r" % (g["sync"], g["vcpus"][0]["clock_offsets"]))
else:
    e = next(e for e in d["events"] if e["input"] == 1 and "vm" in e)
    print("ok %d events as the text, %d guest events in VM %d %r as stat has it" %
          (len(d["events"]), n, e["vm"], e["vm_name"]))
PY
)
		case $r in
		ok*) echo "ok merge_json (${r#ok })" ;;
		*) echo "not ok merge_json: $r" ;;
		esac
	else
		echo "not ok merge_json: $(head -1 "$dir/err")"
	fi
	# --quality names the guest's host VM as stat does: PID(NAME)
	want=$(python3 - "$dir/merged.json" "$dir/host.stat.json" <<'PY' 2>/dev/null
import json, sys
tid = json.load(open(sys.argv[1]))["inputs"][1]["vcpus"][0]["host_tid"]
t = next(t for t in json.load(open(sys.argv[2]))["threads"] if t["tid"] == tid)
print("guest-tsync.trace.dat (VM %d%s) synced by" % (t["vm"], "(" + t["vm_name"] + ")" if t["vm_name"] else ""))
PY
)
	if [ -n "$want" ] && grep -qF "; $want" <<< "${q:-}"; then
		echo "ok merge_quality_vm ($want)"
	else
		echo "not ok merge_quality_vm: '${want:-?}' not in '${q:-}'"
	fi
	# @NAME renames the prefix and changes nothing else
	"$ks" merge -t -i "$host" -i "$guest@vm1" > "$dir/named" 2>/dev/null
	if grep -q '^ *vm1: cpus=1$' "$dir/named" &&
	   [ "$(sed 's/^ *[^:]*: //' "$dir/named" | md5sum)" = "$(sed 's/^ *[^:]*: //' "$dir/want" | md5sum)" ]; then
		echo "ok merge_name_prefix"
	else
		echo "not ok merge_name_prefix: $(sed -n 2p "$dir/named")"
	fi
fi

# Debian's trace-cmd (3.1.6, no zlib) on zstd / v6 copies made by
# `kvmscope convert`: a second, independent trace-cmd build as oracle
if [ -r "$host" ] && command -v trace-cmd > /dev/null && "$ks" convert --help > /dev/null 2>&1; then
	for kind in zstd v6; do
		case $kind in zstd) copt="--compression zstd";; v6) copt="--file-version 6";; esac
		ok=1
		for f in host guest; do
			"$ks" convert -q -i "$hip/$f-tsync.trace.dat" -o "$dir/$f.$kind.dat" $copt 2>/dev/null || ok=0
		done
		if [ $ok -eq 0 ]; then echo "skip merge_debian_trace_cmd_$kind: convert failed"; continue; fi
		trace-cmd report -t -i "$dir/host.$kind.dat" -i "$dir/guest.$kind.dat" > "$dir/tc.$kind" 2>/dev/null
		"$ks" merge -t -i "$dir/host.$kind.dat" -i "$dir/guest.$kind.dat" > "$dir/ks.$kind" 2>/dev/null
		bad=$(diff "$dir/tc.$kind" "$dir/ks.$kind" | grep -c '^[<>]')
		n=$(wc -l < "$dir/tc.$kind")
		if [ "$bad" -eq 0 ] && [ "$n" -gt 100000 ]; then
			echo "ok merge_debian_trace_cmd_$kind ($n lines identical)"
		else
			echo "not ok merge_debian_trace_cmd_$kind: $bad lines differ of $n; $(diff "$dir/tc.$kind" "$dir/ks.$kind" | sed -n 2p)"
		fi
	done
else
	echo "skip merge_debian_trace_cmd: trace-cmd, convert or the recordings are absent"
fi

# A generated host+guest pair (tools/gen-merge-pair: GUEST option on the
# host, TimeShift with drifting offsets on the guest; the merge bench's
# input, smaller): Debian's trace-cmd report -t -i HOST -i GUEST is the
# oracle, for each compression.
gen=$KS_BUILD/tools/gen-merge-pair
if command -v trace-cmd >/dev/null 2>&1 && [ -x "$gen" ]; then
	for comp in zstd none; do
		mkdir -p "$dir/pair-$comp"
		if ! "$gen" "$(dirname "$0")/../fixtures/x86-6.18" "$dir/pair-$comp" 40000 "$comp"; then
			echo "not ok merge_generated_pair_$comp: gen-merge-pair failed"; continue
		fi
		h=$dir/pair-$comp/host.dat g=$dir/pair-$comp/guest.dat
		trace-cmd report -t -i "$h" -i "$g" > "$dir/pair.tc" 2>/dev/null
		"$ks" merge -t -i "$h" -i "$g" > "$dir/pair.ks" 2>/dev/null
		n=$(wc -l < "$dir/pair.tc")
		# 80000 events and the two "cpus=" lines; guest times moved to
		# the host's (before 1.000000150 only when TimeShift is applied)
		if cmp -s "$dir/pair.tc" "$dir/pair.ks" && [ "$n" -eq 80002 ] &&
		   grep -q '^guest.dat: .* 0\.99999' "$dir/pair.ks"; then
			echo "ok merge_generated_pair_$comp ($n lines identical)"
		else
			echo "not ok merge_generated_pair_$comp: $(diff "$dir/pair.tc" "$dir/pair.ks" | grep -c '^[<>]') lines differ of $n; $(diff "$dir/pair.tc" "$dir/pair.ks" | sed -n 2p)"
		fi
	done
else
	echo "skip merge_generated_pair: trace-cmd or $gen is absent"
fi

# bad input: one line, exit status 1, no crash
printf 'not a trace\n' > "$dir/bad.txt"
"$ks" merge -i /nonexistent/host.dat -i "$dir/bad.txt" > /dev/null 2> "$dir/bad.err"
rc=$?
if [ "$rc" -eq 1 ] && [ "$(wc -l < "$dir/bad.err")" -eq 1 ]; then
	echo "ok merge_bad_input"
else
	echo "not ok merge_bad_input: status $rc, $(head -2 "$dir/bad.err")"
fi
"$ks" merge --tsc-offset nonsense x > /dev/null 2>&1
[ $? -eq 2 ] && echo "ok merge_usage_error" || echo "not ok merge_usage_error: expected status 2"
