#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# exporter_hostile_test.sh - the exporter beside hostile HTTP clients and
# hostile QMP peers.
#
# Clients (tests/cli/http_hostile.py; the hostile ones connect from other
# loopback addresses than the real scraper, 127.0.0.1, as they would from
# other hosts):
#  - clients that send GET /metrics and never read, on a replay of a few
#    thousand series (ftrace text written here): the exporter's RSS does
#    not grow with their number (28 more than 4 of them cost less than
#    three bodies, one formatted meanwhile included; a copy per client
#    cost 28);
#  - slowloris clients (half a request head, one header line a second),
#    idle ones and non-reading ones, 64 in all: real scrapes still
#    succeed (and are timed); --head-timeout 2 closes every slowloris
#    and idle connection within a few seconds whatever they trickle;
#  - 20 connections from one address: those beyond --max-per-address
#    (16) are closed at once; 500 idle connections from 50 addresses do
#    not lock a scrape out;
#  - POST with a 200 KB body, PUT, DELETE: 405 with "Allow: GET, HEAD".
# Peers (tests/cli/fake_qmp.py):
#  - a VM name (query-name) of 40 two- and three-byte characters and an
#    invalid byte: the scrape passes promtool's parser (invalid UTF-8 in a
#    label value is a parse error) and the domain label is the name cut
#    on a character boundary, the invalid byte as U+FFFD (computed here);
#  - a peer that streams QMP events and never answers: a scrape is served
#    (kvmscope_qmp_up 0) within the command deadline, and SIGTERM during
#    that scrape ends the exporter within a second.
set -u
ks=$KVMSCOPE
here=$(cd "$(dirname "$0")" && pwd)
dir=$KS_TMP/exporter-hostile
mkdir -p "$dir"
# start_exporter, stop, series_of_threads...
. "$here/../lib/peers.sh"
peers_start
cleanup() {
	exec 7>&- 8>&- 2>/dev/null
	peers_stop
}
trap cleanup EXIT
san=0
case ${KS_BUILD:-} in *-san) san=1 ;; esac

rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
# scrape_ms OUT: one scrape by the real scraper; prints "CODE MS"
scrape_ms() {
	local t0 t1 code
	t0=$(date +%s%N)
	code=$(curl -s -m 10 -o "$1" -w '%{http_code}' "http://127.0.0.1:$PORT/metrics")
	t1=$(date +%s%N)
	echo "$code $(((t1 - t0) / 1000000))"
}
# hostile FD OUT SPEC...: hostile clients held while fd FD stays open
hostile() {
	local fd=$1 out=$2
	shift 2
	rm -f "$dir/fifo$fd"
	mkfifo "$dir/fifo$fd"
	python3 "$here/http_hostile.py" "$PORT" "$@" <"$dir/fifo$fd" >"$out" &
	HPID=$!
	pids+=("$HPID")
	eval "exec $fd>\"$dir/fifo$fd\""
	for i in $(seq 100); do grep -q '^connected' "$out" && return 0; sleep 0.1; done
	return 1
}

# ---- a replay with ~4000 series: 256 threads x 16 reasons
series_of_threads "$dir/series.txt" 256

# ---- non-reading clients: the bytes in flight do not grow with them
if start_exporter "$dir/nonread.err" -i "$dir/series.txt" --speed max; then
	for i in $(seq 100); do
		curl -sf "http://127.0.0.1:$PORT/metrics" -o "$dir/nr.prom" && grep -q '^kvmscope_replay_finished 1' "$dir/nr.prom" && break
		sleep 0.2
	done
	size=$(stat -c %s "$dir/nr.prom")
	nser=$(grep -c '^kvmscope_exits_total{' "$dir/nr.prom")
	# 4 non-reading clients, then 28 more: what each one more costs
	hostile 7 "$dir/nr.out" nonread:4@127.0.0.2
	h1=$HPID
	sleep 2 # every one has asked; the replies are stuck in their sockets
	r0=$(rss "$EPID")
	hostile 8 "$dir/nr2.out" nonread:14@127.0.0.3 nonread:14@127.0.0.4
	sleep 2
	r1=$(rss "$EPID")
	read -r code ms < <(scrape_ms "$dir/nr2.prom")
	exec 7>&- 8>&-
	wait "$h1" "$HPID"
	growth=$((r1 - r0))
	limit=$((3 * size / 1024))
	if [ "$code" = 200 ] && [ "$nser" -ge 3500 ] && grep -q '^connected 4 refused 0' "$dir/nr.out" &&
	   grep -q '^connected 28 refused 0' "$dir/nr2.out" &&
	   { [ $san = 1 ] || [ "$growth" -le "$limit" ]; }; then
		echo "ok exporter_nonreading_clients_bounded ($nser series, body $((size / 1024)) kB: RSS with 4 non-reading clients $r0 kB, with 32 $r1 kB: $((growth / 28)) kB per client; then a scrape in $ms ms)"
	else
		echo "not ok exporter_nonreading_clients_bounded: $nser series, body $((size / 1024)) kB, RSS with 4 non-reading clients $r0 kB, with 32 $r1 kB (limit +$limit kB, 3 bodies), scrape $code in $ms ms, $(head -1 "$dir/nr.out") / $(head -1 "$dir/nr2.out")"
	fi
	stop "$EPID"
else
	echo "not ok exporter_nonreading_clients_bounded: the exporter did not start: $(head -1 "$dir/nonread.err")"
fi

# ---- slowloris, idle and non-reading clients beside real scrapes
if start_exporter "$dir/slow.err" -i "$dir/series.txt" --rate 20000; then
	specs=()
	for a in 2 3 4 5; do specs+=("slowloris:8@127.0.0.$a"); done
	for a in 6 7 8; do specs+=("idle:8@127.0.0.$a"); done
	specs+=("nonread:8@127.0.0.9")
	SLOW=1 hostile 7 "$dir/slow.out" "${specs[@]}"
	fails=0 worst=0 all=
	for i in 1 2 3 4 5; do
		read -r code ms < <(scrape_ms "$dir/slow.prom")
		[ "$code" = 200 ] || fails=$((fails + 1))
		[ "$ms" -gt "$worst" ] && worst=$ms
		all="$all $ms"
		sleep 0.5
	done
	exec 7>&-
	wait "$HPID"
	if [ "$fails" = 0 ] && grep -q '^connected 64 refused 0' "$dir/slow.out"; then
		echo "ok exporter_slowloris_idle_nonreading (5 scrapes beside 64 hostile clients, slowest $worst ms:$all)"
	else
		echo "not ok exporter_slowloris_idle_nonreading: $fails of 5 scrapes failed (ms:$all), $(head -1 "$dir/slow.out")"
	fi
	# one address: those beyond 16 are closed at once
	hostile 7 "$dir/one.out" idle:20@127.0.0.10
	sleep 1
	exec 7>&-
	wait "$HPID"
	closed=$(sed -n 's/^closed //p' "$dir/one.out")
	[ "${closed:-0}" = 4 ] && echo "ok exporter_per_address_limit (4 of 20 closed before the head deadline)" ||
		echo "not ok exporter_per_address_limit: ${closed:-?} of 20 closed within 1 s, want 4"
	# 500 idle connections
	specs=()
	for a in $(seq 20 69); do specs+=("idle:10@127.0.0.$a"); done
	hostile 7 "$dir/idle.out" "${specs[@]}"
	read -r code ms < <(scrape_ms "$dir/idle.prom")
	exec 7>&-
	wait "$HPID"
	[ "$code" = 200 ] && echo "ok exporter_500_idle_connections (a scrape in $ms ms)" ||
		echo "not ok exporter_500_idle_connections: scrape $code in $ms ms, $(head -1 "$dir/idle.out")"
	# methods
	head -c 200000 /dev/zero | tr '\0' 'x' > "$dir/body"
	post=$(curl -s -D "$dir/post.hdr" -o /dev/null -w '%{http_code}' -X POST --data-binary @"$dir/body" "http://127.0.0.1:$PORT/metrics")
	put=$(curl -s -o /dev/null -w '%{http_code}' -X PUT -d x "http://127.0.0.1:$PORT/")
	del=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "http://127.0.0.1:$PORT/metrics")
	get=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/metrics")
	if [ "$post$put$del$get" = 405405405200 ] && grep -qi '^allow: GET, HEAD' "$dir/post.hdr"; then
		echo "ok exporter_405_for_other_methods"
	else
		echo "not ok exporter_405_for_other_methods: POST (200 KB body) $post, PUT $put, DELETE $del, then GET $get; $(grep -i '^allow' "$dir/post.hdr")"
	fi
	stop "$EPID"
else
	echo "not ok exporter_slowloris_idle_nonreading: the exporter did not start: $(head -1 "$dir/slow.err")"
fi

# ---- the head deadline: trickling header lines does not keep a connection
if start_exporter "$dir/head.err" -i "$dir/series.txt" --rate 20000 --head-timeout 2; then
	specs=()
	for a in 2 3 4 5; do specs+=("slowloris:8@127.0.0.$a"); done
	for a in 6 7 8; do specs+=("idle:8@127.0.0.$a"); done
	SLOW=0.5 hostile 7 "$dir/head.out" "${specs[@]}"
	sleep 3.5 # > --head-timeout and a sweep
	read -r code ms < <(scrape_ms "$dir/head.prom")
	exec 7>&-
	wait "$HPID"
	closed=$(sed -n 's/^closed //p' "$dir/head.out")
	if [ "$code" = 200 ] && grep -q '^connected 56 refused 0' "$dir/head.out" && [ "${closed:-0}" = 56 ]; then
		echo "ok exporter_head_deadline (the 32 slowloris and 24 idle connections closed within 3.5 s by --head-timeout 2)"
	else
		echo "not ok exporter_head_deadline: closed ${closed:-?} of 56 ($(head -1 "$dir/head.out")), then a scrape $code"
	fi
	stop "$EPID"
else
	echo "not ok exporter_head_deadline: the exporter did not start: $(head -1 "$dir/head.err")"
fi

# ---- a VM name that is long non-ASCII text with an invalid byte
name='\xc3\xa9\xe2\x82\xac\xc3\xa9\xe2\x82\xac\xc3\xa9\xe2\x82\xac\xc3\xa9\xe2\x82\xac\xc3\xa9\xe2\x82\xac\xc3\xa9\xe2\x82\xac\xc3\xa9\xe2\x82\xac\xc3\xa9\xe2\x82\xac\xc3\xa9\xe2\x82\xac\xc3\xa9\xe2\x82\xac\xc3\xa9\xe2\x82\xac\xc3\xa9\xe2\x82\xac\xc3\xa9\xe2\x82\xac\xc3\xa9\xe2\x82\xac\xc3\xa9\xe2\x82\xac\xc3\xa9\xe2\x82\xac\xc3\xa9\xe2\x82\xac\xc3\xa9\xe2\x82\xac\xc3\xa9\xe2\x82\xac\xc3\xa9\xe2\x82\xac'
python3 "$here/fake_qmp.py" "$dir/utf8.sock" --name 'a\xffb\\"'"$name" &
pids+=($!)
for i in $(seq 50); do [ -S "$dir/utf8.sock" ] && break; sleep 0.1; done
if start_exporter "$dir/utf8.err" -i "$dir/series.txt" --speed max --qmp "$dir/utf8.sock"; then
	curl -s -m 10 "http://127.0.0.1:$PORT/metrics" -o "$dir/utf8.prom"
	stop "$EPID"
	promtool check metrics < "$dir/utf8.prom" > "$dir/promtool.out" 2>&1
	# the label the exporter must give: the name as UTF-8 (U+FFFD for the
	# invalid byte), cut to at most 63 bytes of the name on a character
	# boundary, then escaped as the exposition format wants
	want=$(python3 - "$name" <<'PY'
import sys
raw = b"a\xffb\\\"" + sys.argv[1].encode().decode("unicode_escape").encode("latin-1")
def seq(i):  # length of the well-formed character at i, 0 if none
    for l in (1, 2, 3, 4):
        try:
            if len(raw[i:i + l].decode("utf-8")) == 1 and i + l <= len(raw):
                return l
        except UnicodeDecodeError:
            pass
    return 0
i = 0
while i < len(raw):
    l = seq(i) or 1
    if i + l > 63:
        break
    i += l
cut = raw[:i]
text = cut.decode("utf-8", "replace")
print(text.replace("\\", "\\\\").replace('"', '\\"'))
PY
)
	got=$(sed -n 's/^kvmscope_qmp_up{socket="[^"]*",domain="\(.*\)"} 1$/\1/p' "$dir/utf8.prom")
	if ! grep -q 'parsing error' "$dir/promtool.out" && [ -n "$got" ] && [ "$got" = "$want" ] &&
	   grep -q "^kvm_stat_vm_stat_total{domain=\"$(printf '%s' "$want" | sed 's/[\\.*[]/\\&/g')\"} 7$" "$dir/utf8.prom"; then
		echo "ok exporter_utf8_labels (promtool parses the scrape; the name cut to ${#got} characters)"
	else
		echo "not ok exporter_utf8_labels: promtool: $(grep -m1 -i error "$dir/promtool.out"); label '$got', want '$want'"
	fi
else
	echo "not ok exporter_utf8_labels: the exporter did not start: $(head -1 "$dir/utf8.err")"
fi

# ---- a QMP peer that streams events and never answers
python3 "$here/fake_qmp.py" "$dir/events.sock" --events 0.05 &
pids+=($!)
for i in $(seq 50); do [ -S "$dir/events.sock" ] && break; sleep 0.1; done
if start_exporter "$dir/events.err" -i "$dir/series.txt" --speed max --qmp "$dir/events.sock"; then
	read -r code ms < <(scrape_ms "$dir/events.prom")
	# a second scrape, then SIGTERM while it waits for the peer
	curl -s -m 10 -o /dev/null "http://127.0.0.1:$PORT/metrics" &
	cpid=$!
	sleep 1.5 # fresh body gone: this scrape connects to the peer again
	t0=$(date +%s%N)
	kill -TERM "$EPID"
	for i in $(seq 100); do kill -0 "$EPID" 2>/dev/null || break; sleep 0.02; done
	t1=$(date +%s%N)
	alive=no
	kill -0 "$EPID" 2>/dev/null && alive=yes
	kill -KILL "$EPID" 2>/dev/null
	wait "$EPID" 2>/dev/null
	wait "$cpid" 2>/dev/null
	tms=$(((t1 - t0) / 1000000))
	if [ "$code" = 200 ] && grep -q '^kvmscope_qmp_up{socket="[^"]*events.sock",domain=""} 0$' "$dir/events.prom" &&
	   [ $alive = no ] && [ "$tms" -lt 1000 ]; then
		echo "ok exporter_qmp_event_stream (scrape in $ms ms with kvmscope_qmp_up 0; SIGTERM ended it in $tms ms)"
	else
		echo "not ok exporter_qmp_event_stream: scrape $code in $ms ms ($(grep '^kvmscope_qmp_up' "$dir/events.prom")), after SIGTERM alive $alive at $tms ms"
	fi
else
	echo "not ok exporter_qmp_event_stream: the exporter did not start: $(head -1 "$dir/events.err")"
fi
