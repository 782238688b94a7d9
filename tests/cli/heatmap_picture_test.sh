#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# heatmap_picture_test.sh - the stat --heatmap picture shows where the
# exits are, as headless Chromium draws it.
#
# A generated recording (tools/gen-kvm-perfdata, x86 formats of
# tests/fixtures/x86-6.18): one vCPU, HLT exits over 0.4 s taking 2.1-2.9
# us (every 100 us) in the first half and 1.1-1.9 ms (every 2.5 ms) in the
# second, and 50 EXTERNAL_INTERRUPTs of 40 us in the first tenth.  Chromium renders the
# SVG; the screenshot is decoded here (PNG: zlib + the five row filters)
# and read at the centre of every cell of each panel's grid (the <g
# id="grid-N"> data-* attributes give where the grid is):
#  - HLT: every time bin of the first half is coloured in the 2-4 us bucket
#    and empty in the 1-2 ms bucket, every bin of the second half the
#    opposite; no other bucket is coloured;
#  - EXTERNAL_INTERRUPT: coloured only in the 32 us bucket of the first
#    tenth of the bins;
#  - the panels come largest first (HLT, then EXTERNAL_INTERRUPT).
set -u
ks=${KVMSCOPE:-build/kvmscope}
gen=${KS_BUILD:-build}/tools/gen-kvm-perfdata
T=${KS_TMP:-/tmp}/heatmap_picture
chromium=/usr/bin/chromium
names="heatmap_picture_hlt heatmap_picture_irq"
mkdir -p "$T/fmt/kvm"
if [ ! -x "$chromium" ] || ! command -v python3 > /dev/null || [ ! -x "$gen" ]; then
	for n in $names; do echo "skip $n: needs $chromium, python3 and $gen"; done
	exit 0
fi
cp tests/fixtures/x86-6.18/kvm_entry.format tests/fixtures/x86-6.18/kvm_exit.format "$T/fmt/kvm/"
python3 - "$T/scn" <<'PY'
import sys
out = open(sys.argv[1], "w")
out.write("comm 1001 1000 CPU 0/KVM\n")
ev, t0 = [], 1000000000
ev.append((t0 - 1000, "kvm:kvm_entry vcpu_id=0"))
for i in range(2000):  # the first half: every 100 us
    t = t0 + i * 100000
    if i < 400 and i % 8 == 3:
        ev += [(t, "kvm:kvm_exit exit_reason=1 isa=1 vcpu_id=0"), (t + 40000, "kvm:kvm_entry vcpu_id=0")]
    else:
        ev += [(t, "kvm:kvm_exit exit_reason=12 isa=1 vcpu_id=0"),
               (t + 2100 + (i * 7) % 800, "kvm:kvm_entry vcpu_id=0")]
for i in range(80):    # the second half: every 2.5 ms
    t = t0 + 200000000 + i * 2500000
    ev += [(t, "kvm:kvm_exit exit_reason=12 isa=1 vcpu_id=0"),
           (t + 1100000 + (i * 7919) % 800000, "kvm:kvm_entry vcpu_id=0")]
for t, e in sorted(ev):
    out.write("%d 0 1001 1000 %s\n" % (t, e))
PY
if ! "$gen" --formats "$T/fmt" --machine x86_64 --cpuid GenuineIntel,6,85,7 -o "$T/h.data" "$T/scn" 2> "$T/err" ||
   ! "$ks" stat --heatmap "$T/h.svg" --heatmap-json "$T/h.json" -i "$T/h.data" > "$T/stat.txt" 2>> "$T/err"; then
	for n in $names; do echo "not ok $n: $(head -1 "$T/err")"; done
	exit 0
fi
profile=$(mktemp -d "$T/chromium.XXXXXX")
flags="--headless --no-sandbox --disable-gpu --hide-scrollbars --disable-background-networking --disable-component-update --disable-sync --no-first-run --user-data-dir=$profile --window-size=1000,900"
timeout 90 "$chromium" $flags --screenshot="$T/h.png" "file://$T/h.svg" > /dev/null 2>&1

python3 - "$T/h.png" "$T/h.svg" "$T/h.json" <<'PY'
import json, re, struct, sys, zlib
data = open(sys.argv[1], "rb").read()
if data[:8] != b"\x89PNG\r\n\x1a\n":
    for n in ("hlt", "irq"):
        print("not ok heatmap_picture_%s: no screenshot" % n)
    sys.exit(0)
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
def px(x, y):
    return tuple(rows[y][x * bpp:x * bpp + 3])
def coloured(p):  # the ramp's colours: red high, blue low; not the grey grid, not white
    return p[0] > 100 and p[0] - p[2] > 60
svg = open(sys.argv[2]).read()
grids = [dict((k, int(v)) for k, v in re.findall(r'data-([a-z-]+)="(\d+)"', g))
         for g in re.findall(r'<g id="grid-\d+"[^>]*>', svg)]
titles = re.findall(r'<text[^>]*class="t">([A-Z_]+)', svg)
def cells(g):  # {(bin, bucket): coloured}
    out = {}
    for j in range(g["bins"]):
        for b in range(g["bucket-min"], g["bucket-max"] + 1):
            x = g["x"] + j * g["cell-w"] + g["cell-w"] // 2
            y = g["y"] + (g["bucket-max"] - b) * g["cell-h"] + g["cell-h"] // 2
            out[(j, b)] = coloured(px(x, y)) if x < w and y < h else None
    return out
def bucket(ns):
    return ns.bit_length() - 1
if len(grids) != 2 or titles[:2] != ["HLT", "EXTERNAL_INTERRUPT"]:
    print("not ok heatmap_picture_hlt: panels %s, grids %d" % (titles, len(grids)))
    print("not ok heatmap_picture_irq: panels %s" % titles)
    sys.exit(0)
nb = grids[0]["bins"]
c = cells(grids[0])
bad = []
hm = json.load(open(sys.argv[3]))
for j in range(nb):
    # the time this bin covers, in the first or the second half
    t = hm["start_ns"] + (j + 0.5) * hm["bin_ns"] - 1000000000
    if t < 0 or t > 400000000:
        continue
    first = t < 200000000 - hm["bin_ns"]
    second = t > 200000000 + hm["bin_ns"]
    for b in range(grids[0]["bucket-min"], grids[0]["bucket-max"] + 1):
        if first or second:
            want = b == (bucket(2100) if first else bucket(1100000))
            if c[(j, b)] != want:
                bad.append((j, b, c[(j, b)]))
        elif b not in (bucket(2100), bucket(1100000)) and c[(j, b)]:
            bad.append((j, b, c[(j, b)]))
print(("ok heatmap_picture_hlt (%d bins)" % nb) if not bad else
      "not ok heatmap_picture_hlt: cells (bin, bucket, coloured) wrong: %s" % bad[:6])
c = cells(grids[1])
bad = []
for (j, b), v in c.items():
    t = hm["start_ns"] + (j + 0.5) * hm["bin_ns"] - 1000000000
    inside = 0 <= t < 40000000 - hm["bin_ns"]
    if v != (inside and b == bucket(40000)) and not (t >= 40000000 - hm["bin_ns"] and t < 40000000 + hm["bin_ns"]):
        bad.append((j, b, v))
print("ok heatmap_picture_irq" if not bad else
      "not ok heatmap_picture_irq: cells (bin, bucket, coloured) wrong: %s" % bad[:6])
PY
exit 0
