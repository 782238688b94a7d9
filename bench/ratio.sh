# SPDX-License-Identifier: GPL-2.0-only
# ratio.sh - sourced by the benchmarks: kvmscope against a peer tool as a
# ratio of CPU time (user + system, children included: bench/measure), the
# median of interleaved rounds, printed with its target and "met"/"missed".
#
#	rounds LABEL_A 'CMD_A' LABEL_B 'CMD_B'    # sets CPU[LABEL], RSS[LABEL]
#	verdict "WHAT" PEER_LABEL KS_LABEL TARGET # "WHAT: 3.1x (target >= 3x): met"
#
# The machine these run on is shared and loaded: a command's CPU time moves
# far less than its wall time, and each round runs the commands in turn so a
# slow spell falls on all of them.  $BENCH_ROUNDS rounds (default 5).
declare -A CPU RSS
bench_measure=${bench_measure:-build/bench/measure}

rounds() {
	local n=${BENCH_ROUNDS:-5} r i labels=() cmds=() out
	declare -A all
	while [ $# -ge 2 ]; do labels+=("$1"); cmds+=("$2"); shift 2; done
	for r in $(seq "$n"); do
		for i in "${!cmds[@]}"; do
			out=$("$bench_measure" -n 1 -- sh -c "${cmds[$i]}")
			all[$i]="${all[$i]:-} $(echo "$out" | sed -n 's/.*cpu_s=\([^ ]*\).*/\1/p')"
			RSS[${labels[$i]}]=$(echo "$out" | sed -n 's/.*maxrss_kb=\([^ ]*\).*/\1/p')
		done
	done
	for i in "${!cmds[@]}"; do
		CPU[${labels[$i]}]=$(echo ${all[$i]} | tr ' ' '\n' | sort -g |
			awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
	done
}

# verdict WHAT PEER KS TARGET: the peer's CPU time over kvmscope's.
verdict() {
	awk -v what="$1" -v p="${CPU[$2]}" -v k="${CPU[$3]}" -v t="$4" 'BEGIN {
		r = k > 0 ? p / k : 0
		printf "%s: peer %.3f s, kvmscope %.3f s CPU: %.2fx (target >= %gx): %s\n", what, p, k, r, t,
			r >= t ? "met" : "missed"
	}'
}

# same FILE_A FILE_B WHAT: prints whether two outputs are byte-identical.
same() {
	if cmp -s "$1" "$2"; then echo "$3: output identical"; else echo "$3: OUTPUT DIFFERS"; fi
}

page_cache_note() {
	echo "page cache: warm (every input was read just before it is timed)"
}
