#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# pictures_test.sh - the HTML timeline tells the truth at every zoom.
#
# A generated recording (tools/gen-kvm-perfdata, x86 formats of
# tests/fixtures/x86-6.18): VM A's vCPU 0 is HALTED 95% of the time and
# RUNNING 5%, its vCPU 1 RUNNING 95% and HOST 5%, in 4000 periods of 100 us,
# so that one pixel of the full view spans several intervals of both kinds;
# VM B's threads are created vCPU 1 first.  Headless Chromium renders the
# page; the screenshot is decoded here (PNG: zlib + the five row filters)
# and the state row of each vCPU is found as a band of pixel lines:
#  - full zoom (level-of-detail bins) and zoomed in to 2 ms (raw intervals,
#    via page.html#v=START,END): >= 80% of the HALTED vCPU's pixels have the
#    HALTED colour, >= 80% of the RUNNING vCPU's the RUNNING colour (the
#    page drawing the last interval of a pixel painted the first one green);
#  - the rows are VM -> vCPU in numeric order, then host CPUs (the page's
#    own data), and the bands come in that order;
#  - no "guest tasks" rows without a guest trace;
#  - the SVG flame graph fills an 1800-px window and colours guest kernel
#    and guest user frames differently.
set -u
ks=${KVMSCOPE:-build/kvmscope}
gen=${KS_BUILD:-build}/tools/gen-kvm-perfdata
T=${KS_TMP:-/tmp}/pictures_test.$$
chromium=/usr/bin/chromium
mkdir -p "$T/fmt/kvm"
names="pictures_lod_full pictures_lod_zoomed pictures_row_order pictures_flamegraph_width"
if [ ! -x "$chromium" ] || ! command -v python3 > /dev/null || [ ! -x "$gen" ]; then
	for n in $names; do echo "skip $n: needs $chromium, python3 and $gen"; done
	exit 0
fi
cp tests/fixtures/x86-6.18/kvm_entry.format tests/fixtures/x86-6.18/kvm_exit.format "$T/fmt/kvm/"
python3 - "$T/scn" <<'PY'
import sys
out = open(sys.argv[1], "w")
for tid, pid, n in ((1001, 1000, "CPU 0/KVM"), (1002, 1000, "CPU 1/KVM"),
                    (2002, 2000, "CPU 1/KVM"), (2001, 2000, "CPU 0/KVM")):
    out.write("comm %d %d %s\n" % (tid, pid, n))
ev = []
for i in range(4000):
    t = 1000000 + i * 100000
    ev += [(t, 0, 1001, 1000, "kvm:kvm_entry vcpu_id=0"),
           (t + 5000, 0, 1001, 1000, "kvm:kvm_exit exit_reason=12 isa=1"),  # HLT
           (t + 1000, 1, 1002, 1000, "kvm:kvm_entry vcpu_id=1"),
           (t + 96000, 1, 1002, 1000, "kvm:kvm_exit exit_reason=48 isa=1")]
    if i % 10 == 0:
        ev += [(t + 2000, 2, 2002, 2000, "kvm:kvm_entry vcpu_id=1"),
               (t + 3000, 2, 2002, 2000, "kvm:kvm_exit exit_reason=30 isa=1"),
               (t + 4000, 3, 2001, 2000, "kvm:kvm_entry vcpu_id=0"),
               (t + 8000, 3, 2001, 2000, "kvm:kvm_exit exit_reason=30 isa=1")]
for e in sorted(ev):
    out.write("%d %d %d %d %s\n" % e)
PY
if ! "$gen" --formats "$T/fmt" --machine x86_64 -o "$T/lod.data" "$T/scn" 2> "$T/err" ||
   ! "$ks" timeline -q --html "$T/lod.html" -i "$T/lod.data" 2>> "$T/err"; then
	for n in $names; do echo "not ok $n: $(head -1 "$T/err")"; done
	exit 0
fi
profile=$(mktemp -d "$T/chromium.XXXXXX")
flags="--headless --no-sandbox --disable-gpu --hide-scrollbars --disable-background-networking --disable-component-update --disable-sync --no-first-run --user-data-dir=$profile --window-size=1400,400"
timeout 90 "$chromium" $flags --screenshot="$T/full.png" "file://$T/lod.html" > /dev/null 2>&1
timeout 90 "$chromium" $flags --screenshot="$T/zoom.png" "file://$T/lod.html#v=0,2000000" > /dev/null 2>&1

# bands PNG: the state colours' bands top to bottom, "NAME:SHARE" each
cat > "$T/bands.py" <<'PY'
import struct, sys, zlib
COL = {"RUNNING": (0x2e, 0x9d, 0x3a), "HALTED": (0x7f, 0x8f, 0xa6), "HOST": (0xe6, 0xa1, 0x17)}
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat = 8, b""
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
bpp = {2: 3, 6: 4}[ctype]
raw, stride, prev, rows = zlib.decompress(idat), w * bpp, bytearray(w * bpp), []
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(line)
    prev = line
x0, x1 = 225, w - 15           # the data area: right of the labels
bands, cur = [], None
for y, line in enumerate(rows):
    px = [tuple(line[x * bpp:x * bpp + 3]) for x in range(x0, x1)]
    share = {k: sum(p == c for p in px) / len(px) for k, c in COL.items()}
    k = max(share, key=share.get)
    if share[k] < 0.02:
        cur = None
        continue
    if cur is None or cur[0] != k:
        cur = [k, []]
        bands.append(cur)
    cur[1].append(share[k])
# a band's share: its median line (row edges are antialiased)
print(" ".join("%s:%.3f" % (k, sorted(s)[len(s) // 2]) for k, s in bands))
PY
for v in full zoom; do
	name=pictures_lod_full; [ $v = zoom ] && name=pictures_lod_zoomed
	b=$(python3 "$T/bands.py" "$T/$v.png" 2>&1)
	# expected: VM 1000's vCPU 0 HALTED, vCPU 1 RUNNING, then VM 2000's rows
	read -r -a f <<< "$b"
	if [[ ${f[0]:-} == HALTED:* && ${f[1]:-} == RUNNING:* ]] &&
	   awk -v a="${f[0]#*:}" -v b="${f[1]#*:}" 'BEGIN { exit !(a >= 0.8 && b >= 0.8) }'; then
		echo "ok $name (bands top to bottom: $b)"
	else
		echo "not ok $name: bands top to bottom: $b (want HALTED >= 0.8, then RUNNING >= 0.8)"
	fi
done

# the rows as the page lists them
r=$(python3 - "$T/lod.html" <<'PY'
import json, re, sys
page = open(sys.argv[1]).read()
d = json.loads(re.search(r'<script id="data" type="application/json">(.*?)</script>', page, re.S).group(1))
print("|".join(r["name"] for r in d["rows"]))
PY
)
# VMs by their process id, as stat and every command name them (the host
# model: the perf.data's tgid), vCPUs in numeric order, then host CPUs
want="VM 1000 vCPU 0|VM 1000 vCPU 1|VM 2000 vCPU 0|VM 2000 vCPU 1|host CPU 0|host CPU 1|host CPU 2|host CPU 3"
if [ "$r" = "$want" ]; then
	echo "ok pictures_row_order"
else
	echo "not ok pictures_row_order: $r"
fi

# Flame graph (report --flamegraph of hip24 host + guest, when present):
# stretched to an 1800-px window, the root frame spans the width; guest
# kernel (orange) and guest user (green) frames have different colours.
H=${KS_SHARED:-../shared}/data/hip24
if [ ! -r "$H/host-tsync.trace.dat" ] || [ ! -r "$H/guest-tsync.trace.dat" ]; then
	echo "skip pictures_flamegraph_width: hip24 recordings are absent"
else
	"$ks" report "$H/host-tsync.trace.dat" --guest-trace "$H/guest-tsync.trace.dat" \
		--flamegraph "$T/fg.svg" > /dev/null 2> "$T/err"
	timeout 90 "$chromium" ${flags/--window-size=1400,400/--window-size=1800,300} \
		--screenshot="$T/fg.png" "file://$T/fg.svg" > /dev/null 2>&1
	r=$(python3 - "$T/bands.py" "$T/fg.png" <<'PY'
import sys
src = open(sys.argv[1]).read().split("x0, x1 = ")[0]   # the PNG decoder
sys.argv = [sys.argv[0], sys.argv[2]]
exec(src)
root = max(sum(tuple(l[x * bpp:x * bpp + 3]) == (200, 200, 190) for x in range(w)) for l in rows)
kinds = set()
for l in rows:
    for x in range(0, w, 3):
        r, g, b = l[x * bpp:x * bpp + 3]
        if r >= 230 and 120 <= g < 180 and 30 <= b < 60:
            kinds.add("kernel")
        elif 90 <= r < 140 and 190 <= g < 230 and 70 <= b < 110:
            kinds.add("user")
print("%d %d %s" % (root, w, ",".join(sorted(kinds))))
PY
)
	read -r root width kinds <<< "$r"
	if [ "${width:-0}" -eq 1800 ] && [ "$((root * 100))" -ge "$((width * 95))" ] && [ "$kinds" = "kernel,user" ]; then
		echo "ok pictures_flamegraph_width (root frame $root of $width px; colours: $kinds)"
	else
		echo "not ok pictures_flamegraph_width: root frame ${root:-?} of ${width:-?} px, colours '${kinds:-}'"
	fi
fi
rm -rf "$T"
