# SPDX-License-Identifier: GPL-2.0-only
# gen.sh - sourced by the tests that measure kvmscope on perf.data files of
# tools/gen-perfdata: the set-up they share.
#
#	gen_setup SUBDIR NAME
#	                 # gen, measure (bench/measure), dir ($KS_TMP/SUBDIR,
#	                 # made) and the template $dir/tmpl.data, recorded by
#	                 # `perf kvm stat record`; where a piece is missing,
#	                 # prints "skip NAME: why" and exits 0
#	asan_bound MB    # MB, or 160 where $ks is built with AddressSanitizer
#	                 # (its shadow memory and quarantine add to every
#	                 # allocation)
#
# Uses $KVMSCOPE (or $ks), $KS_BUILD and $KS_TMP.
gen_setup() {
	gen=${KS_BUILD:?}/tools/gen-perfdata
	measure=$KS_BUILD/bench/measure
	dir=${KS_TMP:?}/$1
	mkdir -p "$dir"
	if [ ! -x "$measure" ] || [ ! -x "$gen" ]; then
		echo "skip $2: $measure or $gen not built (make tests)"
		exit 0
	fi
	if ! command -v perf >/dev/null ||
	   ! perf kvm stat record -a -o "$dir/tmpl.data" sleep 0.1 >/dev/null 2>&1; then
		echo "skip $2: no perf to record a template"
		exit 0
	fi
}

asan_bound() {
	if grep -q __asan_init "${ks:-$KVMSCOPE}" 2>/dev/null; then echo 160; else echo "$1"; fi
}
