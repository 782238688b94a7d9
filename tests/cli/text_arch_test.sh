#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# text_arch_test.sh - ftrace text of each architecture's KVM events is read
# with that architecture's event formats: `kvmscope stat` on the text must
# print what it prints on the perf.data the text was printed from.
#
# For arm64, powerpc, s390, riscv and loongarch: the scenario of
# tests/cli/arch_oracle.py, a perf.data of it (tools/gen-kvm-perfdata with the
# real formats of tests/fixtures/ARCH), printed as text by `kvmscope dump -t`
# (trace-cmd report's layout; dump_test.sh checks it against trace-cmd and
# perf script): once with libtraceevent's plugins, whose kvm plugin puts
# "<CANT FIND FIELD exit_reason>" before the kvm_exit and kvm_entry text of
# the architectures that are not x86, as `trace-cmd report` does, and once
# without (-N).  stat on the perf.data is checked against independent
# oracles elsewhere (arch_stat_test.sh: a replay of the scenario and the
# kernel's names; foreign_perf_test.sh: each architecture's perf); here the
# text must give the same rows by reason, by vCPU, with --measure run, and
# in perf's layout.  (The text has no process ids: rows by VM differ, as
# they would for trace-cmd's text of a real recording.)  The architecture
# comes from the text alone; --arch names it for a text that does not show
# it.
set -u
K=${KVMSCOPE:?}
GEN=${KS_BUILD:?}/tools/gen-kvm-perfdata
T=${KS_TMP:?}/text_arch
mkdir -p "$T"

for arch in arm64 powerpc s390 riscv loongarch; do
	scn=$T/$arch.scn data=$T/$arch.data
	if ! python3 tests/cli/arch_oracle.py scenario $arch "$scn" "$T/$arch.exp" ||
	   ! "$GEN" --formats tests/fixtures/$arch --machine $arch -o "$data" "$scn" 2> "$T/err"; then
		echo "not ok text_arch[$arch]: generator failed: $(head -1 "$T/err")"
		continue
	fi
	for plugins in with without; do
		txt=$T/$arch.$plugins.txt
		opt=
		[ $plugins = without ] && opt=-N
		if ! "$K" dump -t $opt "$data" > "$txt" 2> "$T/err"; then
			echo "not ok text_arch[$arch, $plugins plugins]: dump failed: $(head -1 "$T/err")"
			continue
		fi
		bad=
		for view in "--csv" "--by vcpu --csv" "--measure run --csv" "--format perf"; do
			# (stderr apart: notes name the input, its path differs)
			"$K" stat -i "$data" $view > "$T/want" 2> "$T/want.err"
			if ! "$K" stat -i "$txt" $view > "$T/got" 2> "$T/err"; then
				bad="stat $view on the text failed: $(head -1 "$T/err")"
				break
			fi
			if ! cmp -s "$T/want" "$T/got"; then
				bad="stat $view differs from the perf.data's: $(diff "$T/want" "$T/got" | sed -n 2p)"
				break
			fi
		done
		rows=$("$K" stat -i "$data" --csv | grep -c '^reason,')
		if [ -n "$bad" ]; then
			echo "not ok text_arch[$arch, $plugins plugins]: $bad"
		elif [ "$rows" -lt 5 ]; then
			echo "not ok text_arch[$arch, $plugins plugins]: only $rows rows on the perf.data"
		else
			echo "ok text_arch[$arch, $plugins plugins]: stat on the text = on the perf.data ($rows reasons, 4 views)"
		fi
	done
	# the text named the architecture
	a=$("$K" stat -i "$T/$arch.without.txt" --json 2> /dev/null |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["arch"])' 2> /dev/null)
	[ "$a" = $arch ] && echo "ok text_arch[$arch]: the text's events say $arch" ||
		echo "not ok text_arch[$arch]: stat says the text is '$a'"
done

# --arch reaches the reader: it reads the text with the formats of the
# architecture named, whatever the text shows.  arm64 text read with
# riscv's formats has no exit; stat then says what the text does show.
if "$K" stat -i "$T/arm64.without.txt" --arch riscv > /dev/null 2> "$T/err"; then
	echo "not ok text_arch[--arch riscv]: arm64 text read as riscv's gave exits"
elif grep -q "arch riscv, but the file's KVM events are arm64's" "$T/err"; then
	echo "ok text_arch[--arch riscv]: arm64 text read with riscv's formats has no exit"
else
	echo "not ok text_arch[--arch riscv]: $(head -1 "$T/err")"
fi
"$K" stat -i "$T/arm64.without.txt" --arch sparc > /dev/null 2> "$T/err"
grep -q "unknown architecture 'sparc' (x86, arm64" "$T/err" &&
	echo "ok text_arch[--arch sparc]: an unknown architecture is an error" ||
	echo "not ok text_arch[--arch sparc]: $(head -1 "$T/err")"
