#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# exporter_soak_test.sh - a real Prometheus scrapes the exporter every
# second for 30 s while 64 hostile connections stay open beside it.
#
# The exporter replays ~1000 series (ftrace text written here) in a loop
# with its default options.  tests/cli/http_hostile.py holds 24 slowloris
# (a header line every 3 s), 24 idle and 16 non-reading connections from
# eight other loopback addresses, each replaced by a new one as soon as
# the exporter closes it (RENEW=1), so that 64 stay open the whole time.
# Then Debian's prometheus (scrape_interval 1s, scrape_timeout 1s: a
# scrape slower than a second fails) starts scraping it: it must get its
# connection beside them, its first scrape within 15 s of its start (the
# exporter of 029a007 let it in only when its 30 s idle timeout released
# the idle ones).
# Oracles: Prometheus's query API over the hostile window: every scrape
# succeeded (min_over_time(up) = 1, count_over_time(up) >= 25 of ~30) and
# the target's lastError is empty; Prometheus keeps its connection open,
# so a scrape on a new connection (curl) is also made every second: none
# fails; the exporter's RSS (VmRSS, sampled
# every 0.5 s) is flat: the peak of the second half is within 20% (+2 MB)
# of the peak of the first half (warm-up excluded), and no sample exceeds
# the first one by more than five bodies (+8 MB).  Not in sanitizer builds: the
# RSS bound (ASan's quarantine keeps freed bodies).
set -u
ks=$KVMSCOPE
here=$(cd "$(dirname "$0")" && pwd)
dir=$KS_TMP/exporter-soak
secs=30
mkdir -p "$dir"
if ! command -v prometheus >/dev/null; then
	echo "skip exporter_soak_hostile: prometheus is not installed (scripts/install-deps.sh)"; exit 0
fi
# start_prometheus, wait_metrics, series_of_threads...
. "$here/../lib/peers.sh"
peers_start
cleanup() {
	exec 7>&- 2>/dev/null
	peers_stop
}
trap cleanup EXIT
san=0
case ${KS_BUILD:-} in *-san) san=1 ;; esac

series_of_threads "$dir/series.txt" 64
eport=$(free_port)
"$ks" exporter --listen "127.0.0.1:$eport" -i "$dir/series.txt" --rate 5000 --loop 100000 2>"$dir/exporter.err" &
EPID=$!
pids+=("$EPID")
wait_metrics "$eport"
specs=()
for a in 2 3 4; do specs+=("slowloris:8@127.0.0.$a"); done
for a in 5 6 7; do specs+=("idle:8@127.0.0.$a"); done
specs+=("nonread:8@127.0.0.8" "nonread:8@127.0.0.9")
rm -f "$dir/fifo"
mkfifo "$dir/fifo"
SLOW=3 RENEW=1 python3 "$here/http_hostile.py" "$eport" "${specs[@]}" <"$dir/fifo" >"$dir/hostile.out" &
hp=$!
pids+=("$hp")
exec 7>"$dir/fifo"
for i in $(seq 50); do grep -q '^connected' "$dir/hostile.out" && break; sleep 0.1; done
start_prometheus "$dir" "$eport" 1s
q() { # EXPR [TIME]: the first result's value, or ""
	curl -sfG "$purl/api/v1/query" --data-urlencode "query=$1" ${2:+--data-urlencode "time=$2"} |
		python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")' 2>/dev/null
}
# the hostile connections came first: Prometheus connects beside them
# (it was started without the fifo: closing it ends http_hostile.py)
t_prom=$(date +%s)
while [ $(($(date +%s) - t_prom)) -le 15 ] && [ "$(q 'up{job="kvmscope"}')" != 1 ]; do sleep 0.2; done
t_up=$(($(date +%s) - t_prom))
if [ "$(q 'up{job="kvmscope"}')" != 1 ] || [ "$t_up" -gt 15 ]; then
	err=$(curl -sf "$purl/api/v1/targets" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["activeTargets"][0]["lastError"])' 2>/dev/null)
	echo "not ok exporter_soak_hostile: Prometheus could not scrape the exporter beside 64 hostile connections in $t_up s: ${err:-$(tail -1 "$dir/prometheus.log")}"
	exit 0
fi

t0=$(date +%s.%N)
: > "$dir/rss"
end=$(($(date +%s) + secs))
fresh=0 fresh_failed=0
while [ "$(date +%s)" -lt "$end" ]; do
	awk '/^VmRSS:/ { print $2 }' "/proc/$EPID/status" >> "$dir/rss"
	# a scrape on a new connection (Prometheus keeps its own open)
	fresh=$((fresh + 1))
	curl -sf -m 5 -o /dev/null "http://127.0.0.1:$eport/metrics" || fresh_failed=$((fresh_failed + 1))
	sleep 0.5
done
t1=$(date +%s.%N)
exec 7>&-
wait "$hp"
sleep 1.5 # the last scrape recorded
curl -sf -o "$dir/last.prom" "http://127.0.0.1:$eport/metrics"
size=$(stat -c %s "$dir/last.prom" 2>/dev/null || echo 0)
span=$(python3 -c "import sys; print(int(float(sys.argv[2]) - float(sys.argv[1])))" "$t0" "$t1")
ups=$(q "count_over_time(up{job=\"kvmscope\"}[${span}s])" "$t1")
minup=$(q "min_over_time(up{job=\"kvmscope\"}[${span}s])" "$t1")
slowest=$(q "max_over_time(scrape_duration_seconds{job=\"kvmscope\"}[${span}s])" "$t1")
lasterr=$(curl -sf "$purl/api/v1/targets" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["activeTargets"][0]["lastError"])')
read -r flat first peak1 peak2 top < <(python3 - "$dir/rss" "$size" <<'PY'
import sys
r = [int(x) for x in open(sys.argv[1]) if x.strip()]
size = int(sys.argv[2]) // 1024
n = len(r)
a, b = r[n // 4: n * 5 // 8], r[n * 5 // 8:]
ok = bool(a and b) and max(b) <= max(a) * 1.2 + 2048 and max(r) <= r[0] + 5 * size + 8192
print(int(ok), r[0], max(a or [0]), max(b or [0]), max(r))
PY
)
[ $san = 1 ] && flat=1
if [ "$minup" = 1 ] && [ "${ups:-0}" -ge $((span * 5 / 6)) ] && [ -z "$lasterr" ] && [ "$flat" = 1 ] &&
   [ "$fresh_failed" = 0 ] &&
   grep -q '^connected 64 refused 0' "$dir/hostile.out"; then
	echo "ok exporter_soak_hostile (first scrape $t_up s after Prometheus started; $ups scrapes in ${span} s beside 64 hostile connections ($(tail -2 "$dir/hostile.out" | tr '\n' ' ')), none failed, slowest ${slowest} s; $fresh scrapes on new connections, none failed; VmRSS first $first kB, peaks $peak1 then $peak2 kB, body $((size / 1024)) kB)"
else
	echo "not ok exporter_soak_hostile: $ups scrapes in ${span} s, min(up) '$minup', $fresh_failed of $fresh scrapes on new connections failed, lastError '$lasterr', slowest ${slowest} s, VmRSS first $first kB, peaks $peak1 then $peak2 (max $top) kB, body $((size / 1024)) kB; $(head -1 "$dir/hostile.out")"
fi
