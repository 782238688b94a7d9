#!/bin/sh
# report_guest_perf_test.sh - kvmscope report on generated perf.data guest
# PMU samples (tools/gen-guest-perfdata): per-VM, per-symbol counts must equal
# the generator's own expectation file (written independently of kvmscope's
# reader); host-mode samples are counted as skipped; guest callchains give
# 3-frame kernel stacks in --folded.
KVMSCOPE=${KVMSCOPE:-build/kvmscope}
KS_BUILD=${KS_BUILD:-build}
KS_TMP=${KS_TMP:-/tmp}
T=$KS_TMP/report_guest_perf.$$
mkdir -p "$T"
GEN=$KS_BUILD/tools/gen-guest-perfdata
if [ ! -x "$GEN" ]; then
	echo "skip report_guest_perf: $GEN not built"
	exit 0
fi
"$GEN" -o "$T/p.data" --kallsyms "$T/ks" --expect "$T/exp" --callchain --samples 30000 --vms 3 --seed 5
"$KVMSCOPE" report "$T/p.data" --guest-kallsyms "$T/ks" --by vm --csv > "$T/csv"
awk -F, '$1 == "samples" { m = ($5 == "[g.u]") ? "u" : "k"; print $2, m, $7, $10 }' "$T/csv" | sort > "$T/got"
grep -v '^host' "$T/exp" | sort > "$T/want"
if cmp -s "$T/got" "$T/want"; then
	echo "ok report_guest_perf_counts ($(wc -l < "$T/got") rows)"
else
	echo "not ok report_guest_perf_counts:"; diff "$T/want" "$T/got" | head -5 | sed 's/^/#   /'
fi
host=$(sed -n 's/^host //p' "$T/exp")
if "$KVMSCOPE" report "$T/p.data" --guest-kallsyms "$T/ks" | grep -q "host-mode samples skipped: $host\$"; then
	echo "ok report_guest_perf_host_skipped"
else
	echo "not ok report_guest_perf_host_skipped: expected $host"
fi
"$KVMSCOPE" report "$T/p.data" --guest-kallsyms "$T/ks" --folded "$T/folded" > /dev/null
if grep -q '^qemu-vm0(1000);guest_fn_00_\[k\];guest_fn_[0-9]*_\[k\];guest_fn_[0-9]*_\[k\] [0-9]*$' "$T/folded" &&
   [ "$(awk '{ s += $NF } END { print s }' "$T/folded")" = "$(awk '{ s += $NF } END { print s }' "$T/want")" ]; then
	echo "ok report_guest_perf_callchains"
else
	echo "not ok report_guest_perf_callchains: folded stacks wrong"; head -3 "$T/folded" | sed 's/^/#   /'
fi
rm -rf "$T"
