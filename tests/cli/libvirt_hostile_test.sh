#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# libvirt_hostile_test.sh - a libvirt daemon that hangs or lies, read by
# top --kvmstats --libvirt and the exporter: every call has a deadline
# (2000 ms in top, 1000 ms in the exporter), SIGTERM ends a wait at once,
# calls given up on do not pile up, and what the daemon says is bounded
# and escaped.
#
# The peer is tests/cli/libvirt_peer.py on a unix socket of the test's
# (URI qemu+unix:///system?socket=PATH): libvirt's own client library
# talks to it.  Oracle: the peer's modes (what it answers, and what it
# never answers), the peer's count of the connections open, and the
# clock.  Needs libvirt.so.0 (libvirt0) and python3; no root.
# timeout: 120
set -u
ks=$KVMSCOPE
dir=$KS_TMP/libvirt-hostile
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$dir"
if ! ldconfig -p | grep -q 'libvirt\.so\.0 '; then
	echo "skip libvirt_hostile: libvirt.so.0 is not installed (apt-get install libvirt0)"
	exit 0
fi

# the sockets in a short directory: top's error rows name the URI whole
sockdir=$(mktemp -d /tmp/kslvXXXXXX) || exit 1
peers=()
cleanup() {
	local p
	for p in "${peers[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	rm -rf "$sockdir"
}
trap cleanup EXIT

# peer MODE: start one, its URI in $uri
peer() {
	local sock=$sockdir/${1:0:1} i
	python3 "$here/libvirt_peer.py" "$sock" "$1" 2> "$dir/$1.log" &
	peers+=($!)
	for i in $(seq 100); do
		[ -S "$sock" ] && break
		sleep 0.05
	done
	uri="qemu+unix:///system?socket=$sock"
}
now() { date +%s%N; }
# since T0: seconds elapsed (3 decimals)
since() {
	local ms=$((($(now) - $1) / 1000000))
	printf '%d.%03d' $((ms / 1000)) $((ms % 1000))
}
# le A B: A <= B (seconds, 3 decimals; B whole)
le() { [ "${1%.*}${1#*.}" -le $(($2 * 1000)) ]; }

# ---- an open the daemon never answers: one line, status 1, in time
peer silent
t0=$(now)
timeout -k 2 20 "$ks" top --kvmstats --libvirt="$uri" -b -n 1 > /dev/null 2> "$dir/silent.err"
rc=$? el=$(since "$t0")
want="kvmscope: libvirt $uri: no answer to virConnectOpenReadOnly within 2000 ms"
if [ $rc = 1 ] && [ "$(cat "$dir/silent.err")" = "$want" ] && le "$el" 4; then
	echo "ok libvirt_hostile_open_unanswered (status 1 in $el s)"
else
	echo "not ok libvirt_hostile_open_unanswered: status $rc in $el s: $(head -2 "$dir/silent.err" | tr '\n' '|')"
fi

# ---- statistics never answered: top's error row within the deadline
peer hang
t0=$(now)
timeout -k 2 20 "$ks" top --kvmstats --libvirt="$uri" -b -n 1 > "$dir/hang.out" 2> "$dir/hang.err"
rc=$? el=$(since "$t0")
# (top cuts a row's text at the width of its column)
if [ $rc = 0 ] && grep -q "^  libvirt $uri: no answer to virConnectGetAllDomainStats" "$dir/hang.out" &&
   le "$el" 6; then
	echo "ok libvirt_hostile_stats_unanswered_row (in $el s)"
else
	echo "not ok libvirt_hostile_stats_unanswered_row: status $rc in $el s: $(tail -2 "$dir/hang.out" | tr '\n' '|') $(head -1 "$dir/hang.err")"
fi

# ---- SIGTERM while a call hangs: top ends within a second
"$ks" top --kvmstats --libvirt="$uri" -b -n 100 -d 1 > /dev/null 2> "$dir/term.err" &
p=$!
sleep 1
t0=$(now)
kill -TERM $p
for i in $(seq 100); do kill -0 $p 2>/dev/null || break; sleep 0.02; done
el=$(since "$t0")
if kill -0 $p 2>/dev/null; then
	kill -9 $p
	echo "not ok libvirt_hostile_sigterm: top still runs $el s after SIGTERM"
else
	wait $p
	rc=$?
	if [ $rc = 0 ] && le "$el" 1; then
		echo "ok libvirt_hostile_sigterm (top ended $el s after SIGTERM)"
	else
		echo "not ok libvirt_hostile_sigterm: status $rc, $el s after SIGTERM: $(head -1 "$dir/term.err")"
	fi
fi

# ---- calls given up on do not pile up: at most 4 run, then none more
: > "$dir/hang.log"
t0=$(now)
"$ks" top --kvmstats --libvirt="$uri" -b -n 7 -d 0.1 > "$dir/pile.out" 2> "$dir/pile.err" &
p=$!
threads=0
for i in $(seq 200); do # (7 readings: 4 of 2 s, then 3 at once)
	kill -0 $p 2>/dev/null || break
	t=$(awk '/^Threads:/ { print $2 }' /proc/$p/status 2>/dev/null)
	[ -n "$t" ] && [ "$t" -gt "$threads" ] && threads=$t
	sleep 0.2
done
kill -9 $p 2>/dev/null
wait $p
rc=$? el=$(since "$t0")
maxconn=$(awk '$1 == "conn" { if ($2 > m) m = $2 } END { print m + 0 }' "$dir/hang.log")
last=$(grep "^  libvirt " "$dir/pile.out" | tail -1)
if [ $rc = 0 ] && [ "$maxconn" -le 4 ] && [ "$threads" -le 6 ] &&
   [[ $last == "  libvirt $uri: 4 calls are still unanswered"* ]]; then
	echo "ok libvirt_hostile_bounded (at most $maxconn connections, $threads threads; $el s)"
else
	echo "not ok libvirt_hostile_bounded: status $rc, $maxconn connections, $threads threads, last row: $last"
fi

# ---- the exporter: a scrape within its deadline, and SIGTERM during one
printf '# tracer: nop\n#\n qemu-system-x86-1234  [000] d..2.   100.000001: kvm_exit: vcpu 0 reason EXTERNAL_INTERRUPT rip 0xffffffff81000000 info1 0x0 info2 0x0 intr_info 0x800000f6 error_code 0x0\n qemu-system-x86-1234  [000] d..2.   100.000002: kvm_entry: vcpu 0, rip 0xffffffff81000000\n' > "$dir/exits.txt"
peer hang
"$ks" exporter --listen 127.0.0.1:0 -i "$dir/exits.txt" --speed max --libvirt="$uri" 2> "$dir/exp.err" &
p=$!
port=""
for i in $(seq 100); do
	port=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\)\/metrics/\1/p' "$dir/exp.err")
	[ -n "$port" ] && break
	kill -0 $p 2>/dev/null || break
	sleep 0.1
done
t0=$(now)
curl -s -m 10 "http://127.0.0.1:$port/metrics" -o "$dir/exp.prom"
crc=$? el=$(since "$t0")
up=$(grep "^kvmscope_libvirt_up{" "$dir/exp.prom" 2>/dev/null)
if [ $crc = 0 ] && [ "$up" = "kvmscope_libvirt_up{uri=\"$uri\"} 0" ] && le "$el" 3; then
	echo "ok libvirt_hostile_exporter_scrape (in $el s, libvirt up 0)"
else
	echo "not ok libvirt_hostile_exporter_scrape: curl status $crc in $el s, $up"
fi
curl -s -m 20 "http://127.0.0.1:$port/metrics" -o /dev/null &
c=$!
sleep 0.4
t0=$(now)
kill -TERM $p 2>/dev/null
for i in $(seq 100); do kill -0 $p 2>/dev/null || break; sleep 0.02; done
el=$(since "$t0")
if kill -0 $p 2>/dev/null; then
	kill -9 $p
	echo "not ok libvirt_hostile_exporter_sigterm: still runs $el s after SIGTERM"
else
	wait $p
	rc=$?
	if [ $rc = 0 ] && le "$el" 1; then
		echo "ok libvirt_hostile_exporter_sigterm (ended $el s after SIGTERM)"
	else
		echo "not ok libvirt_hostile_exporter_sigterm: status $rc, $el s after SIGTERM"
	fi
fi
wait $c 2>/dev/null

# ---- what a daemon says: names escaped and valid UTF-8, statistics only
# of KVM's names, and no more statistics than the bound
peer evil
timeout -k 2 20 "$ks" top --kvmstats --libvirt="$uri" -b -n 1 --json > "$dir/evil.json" 2> "$dir/evil.err"
rc=$?
res=$(python3 - "$dir/evil.json" <<'PY'
import json, sys
try:
    raw = open(sys.argv[1], "rb").read()
    doc = json.loads(raw.decode("utf-8"))
except Exception as e:
    print("not UTF-8 JSON: %s" % e); sys.exit()
rows = doc["rows"]
vm = [r["name"] for r in rows if r["depth"] == 0]
stats = {r["name"]: r["value"] for r in rows if r["depth"] == 1}
want = {"exits": 7, "halt_exits": 11, "blocking": 1}
bad = [n for n in vm if any(ord(ch) < 32 or 0x7f <= ord(ch) < 0xa0 for ch in n)]
if stats != want or len(vm) != 1 or bad or "\ufffd" not in vm[0]:
    print("domains %r, statistics %r (want %r)" % (vm, stats, want))
else:
    print("ok")
PY
)
[ $rc = 0 ] && [ "$res" = ok ] && echo "ok libvirt_hostile_escaped" ||
	echo "not ok libvirt_hostile_escaped: status $rc: $res $(head -1 "$dir/evil.err")"

peer many
timeout -k 2 30 "$ks" top --kvmstats --libvirt="$uri" -b -n 1 > "$dir/many.out" 2> "$dir/many.err"
rc=$?
if [ $rc = 0 ] && grep -q "^  libvirt $uri: more than 262144 statistics$" "$dir/many.out"; then
	echo "ok libvirt_hostile_bounded_statistics"
else
	echo "not ok libvirt_hostile_bounded_statistics: status $rc: $(head -4 "$dir/many.out" | tr '\n' '|')"
fi
