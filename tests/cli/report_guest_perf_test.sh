#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# report_guest_perf_test.sh - kvmscope report on generated perf.data guest
# PMU samples (tools/gen-guest-perfdata): per-VM, per-symbol counts must equal
# the generator's own expectation file (written independently of kvmscope's
# reader); host-mode samples are counted as skipped; guest callchains give
# 3-frame kernel stacks in --folded.  perf is a second oracle: `perf kvm
# --guest --guestkallsyms --guestmodules report` on the same file (its guest
# kernel MMAP record makes perf resolve the samples) must give the same
# samples per guest kernel symbol and the same number of guest user samples.
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
if grep -q '^1000(qemu-vm0);guest_fn_00_\[k\];guest_fn_[0-9]*_\[k\];guest_fn_[0-9]*_\[k\] [0-9]*$' "$T/folded" &&
   [ "$(awk '{ s += $NF } END { print s }' "$T/folded")" = "$(awk '{ s += $NF } END { print s }' "$T/want")" ]; then
	echo "ok report_guest_perf_callchains"
else
	echo "not ok report_guest_perf_callchains: folded stacks wrong"; head -3 "$T/folded" | sed 's/^/#   /'
fi
if ! command -v perf > /dev/null; then
	echo "skip report_guest_perf_vs_perf: no perf"
else
	"$GEN" -o "$T/q.data" --kallsyms "$T/qks" --modules "$T/qmods" --samples 20000 --vms 2 --seed 9
	perf kvm --guest --guestkallsyms="$T/qks" --guestmodules="$T/qmods" -i "$T/q.data" report \
		--stdio --sort sym -F sample,sym -t @ 2> "$T/perr" |
		awk -F@ '!/^#/ && NF >= 2 { n = $1 + 0; sub(/^ +/, "", $2)
			if ($2 ~ /^\[g\] /) print "k", substr($2, 5), n; else if ($2 ~ /^\[u\] /) u += n }
			END { print "u [unknown]", u + 0 }' | sort > "$T/perf.rows"
	# (two VMs: kvmscope's rows are per VM by default, perf's are not; their
	# sums per symbol are perf's rows)
	"$KVMSCOPE" report "$T/q.data" --guest-kallsyms "$T/qks" --guest-modules "$T/qmods" --csv |
		awk -F, '$1 == "samples" { n[(($5 == "[g.u]") ? "u" : "k") " " $7] += $10 }
			END { for (k in n) print k, n[k] }' | sort > "$T/ks.rows"
	if [ "$(wc -l < "$T/perf.rows")" -lt 10 ]; then
		echo "not ok report_guest_perf_vs_perf: perf resolved nothing: $(head -c 200 "$T/perr")"
	elif cmp -s "$T/perf.rows" "$T/ks.rows"; then
		echo "ok report_guest_perf_vs_perf ($(wc -l < "$T/ks.rows") symbols, same samples as perf kvm report)"
	else
		echo "not ok report_guest_perf_vs_perf:"; diff "$T/perf.rows" "$T/ks.rows" | head -5 | sed 's/^/#   /'
	fi
fi
rm -rf "$T"
