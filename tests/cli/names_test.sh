#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# names_test.sh - one name per VM and vCPU in every output.
#
# The VM's display name is the one `kvmscope stat --by vm` prints (the host
# model's, host.h: "PID(NAME)"; stat's names are compared with perf's in
# perf_oracle_test.sh).  On host-tsync (+ guest-tsync), each of report's VM
# column (and its CSV and JSON: pid and name), the timeline (text with and
# without the guest trace, JSON, Perfetto, HTML), the folded flame graph
# stacks, every row level of top --csv and merge's sync line must name the
# guest's VM exactly so.  The
# HTML viewer's row labels (as drawn, in headless Chromium) of
# host-2vcpu-22k must be distinct and keep the VM's pid and the vCPU number.
set -u
ks=$KVMSCOPE
data=$KS_SHARED/data/hip24
host=$data/host-tsync.trace.dat
guest=$data/guest-tsync.trace.dat
dir=$KS_TMP/names
mkdir -p "$dir"

if [ ! -r "$host" ] || [ ! -r "$guest" ]; then
	echo "skip names: hip24 tsync recordings are absent"
	exit 0
fi
# the guest's VM as stat names it: the row of pid 483882 (data/README.md)
vm=$("$ks" stat --by vm -i "$host" 2>/dev/null | sed -n 's/^\(483882\(([^)]*)\)\?\) *all .*/\1/p')
if [[ $vm != "483882("*")" ]]; then
	echo "not ok names_stat: stat names the VM '$vm'"
	exit 0
fi
echo "ok names_stat ($vm)"

# check NAME GOT: GOT (the names one output gives the VM) is exactly $vm
check() {
	if [ -z "$2" ]; then
		echo "not ok $1: no name of VM 483882 found"
	elif [ "$(sort -u <<< "$2")" != "$vm" ]; then
		echo "not ok $1: names it '$(sort -u <<< "$2" | tr '\n' '|')', stat '$vm'"
	else
		echo "ok $1 ($(wc -l <<< "$2") mentions)"
	fi
}

got=$("$ks" report --by vm -i "$host" 2>/dev/null | sed -n 's/^ *[0-9.]*% *[0-9]*  \(483882\(([^)]*)\)\?\)  .*/\1/p')
check names_report "$got"
# report's CSV and JSON: the pid and, beside it, the name (as stat's JSON)
got=$("$ks" report --by vm --csv -i "$host" 2>/dev/null | python3 -c '
import csv, sys
for r in csv.DictReader(sys.stdin):
    if r["vm"] == "483882":
        print("%s(%s)" % (r["vm"], r["vm_name"]) if r["vm_name"] else r["vm"])')
check names_report_csv "$got"
got=$("$ks" report --by vm --json -i "$host" 2>/dev/null | python3 -c '
import json, sys
def rows(o):
    if isinstance(o, dict):
        if o.get("vm") == 483882:
            yield "%d(%s)" % (o["vm"], o["vm_name"]) if "vm_name" in o else str(o["vm"])
        for v in o.values():
            yield from rows(v)
    elif isinstance(o, list):
        for v in o:
            yield from rows(v)
print("\n".join(rows(json.load(sys.stdin))))')
check names_report_json "$got"

"$ks" timeline -i "$host" -i "$guest" --json "$dir/tl.json" --perfetto "$dir/tl.pb" > "$dir/tl.txt" 2>&1
got=$(sed -n 's/^VM \(483882.*\) vCPU 0 (host thread .*/\1/p' "$dir/tl.txt")
check names_timeline_text_with_guest "$got"
got=$("$ks" timeline -i "$host" 2>&1 | sed -n 's/^VM \(483882.*\) vCPU 0 (host thread .*/\1/p')
check names_timeline_text_host_only "$got"
got=$(python3 - "$dir/tl.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ev = d['traceEvents'] if isinstance(d, dict) else d
for e in ev:
    if e.get('ph') == 'M' and e.get('name') in ('process_name', 'thread_name'):
        n = e['args'].get('name', '')
        if n.startswith('VM 483882'):
            n = n[3:]
            print(n[:n.index(' vCPU')] if ' vCPU' in n else n)
PY
)
check names_timeline_json "$got"
got=$(grep -a -o 'VM 483882[^)]*)' "$dir/tl.pb" | sed 's/^VM //')
check names_timeline_perfetto "$got"

"$ks" report -i "$host" --folded "$dir/folded" > /dev/null 2>&1
got=$(cut -d';' -f1 "$dir/folded" | grep '^483882')
check names_flamegraph "$got"

got=$("$ks" top -i "$host" --csv 2>/dev/null | awk -F, '$4 == 483882 { print $5 }')
check names_top_csv_all_levels "$got"

got=$("$ks" merge --quality -i "$host" -i "$guest" 2>&1 >/dev/null | sed -n 's/.*(VM \(483882.*)\)) synced.*/\1/p')
check names_merge "$got"

# HTML: the labels the viewer draws (also its canvas's fallback list)
chromium=/usr/bin/chromium
if [ ! -x "$chromium" ] || [ ! -r "$data/host-2vcpu-22k.trace.dat" ]; then
	echo "skip names_html_labels: chromium or host-2vcpu-22k is absent"
	exit 0
fi
"$ks" timeline -q --html "$dir/22k.html" -i "$data/host-2vcpu-22k.trace.dat" 2> "$dir/err"
"$ks" timeline -i "$data/host-2vcpu-22k.trace.dat" 2>/dev/null | sed -n 's/^VM \([0-9]*\).* vCPU \([0-9]*\) (host thread .*/\1 \2/p' | sort > "$dir/vcpus"
profile=$(mktemp -d "$dir/chromium.XXXXXX")
flags="--headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update --disable-sync --no-first-run --user-data-dir=$profile --window-size=1400,900"
timeout 90 "$chromium" $flags --dump-dom "file://$dir/22k.html" 2>/dev/null |
	grep -o '<ol id="labels">.*</ol>' | sed 's/<ol id="labels">//; s/<\/ol>//; s/<li>//g; s/<\/li>/\n/g' |
	grep '^VM ' > "$dir/labels"
n=$(wc -l < "$dir/labels")
bad=
while read -r pid v; do
	c=$(grep -c "^VM $pid(.*) vCPU $v\$\|^VM $pid vCPU $v\$" "$dir/labels")
	[ "$c" -eq 1 ] || bad="$bad VM $pid vCPU $v: $c labels;"
done < "$dir/vcpus"
if [ "$n" -eq 0 ]; then
	echo "not ok names_html_labels: the page lists no row labels"
elif [ "$n" -ne "$(wc -l < "$dir/vcpus")" ] || [ "$(sort -u "$dir/labels" | wc -l)" -ne "$n" ] || [ -n "$bad" ]; then
	echo "not ok names_html_labels: $(tr '\n' '|' < "$dir/labels") ($bad)"
else
	echo "ok names_html_labels ($(tr '\n' '|' < "$dir/labels"))"
fi
