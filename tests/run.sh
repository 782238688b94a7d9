#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# run.sh BUILD [TEST...] - run the test programs and test scripts in
# parallel and print TAP.
#
# Tests: BUILD/tests/*/test_* (programs) and tests/*/*_test.sh (scripts)
# except the QEMU lab (tests/lab/, `make check-lab`), or the TESTs named.
# Each runs with KVMSCOPE (the binary), KS_BUILD, KS_SHARED, KS_LINUX and
# its own scratch directory KS_TMP (removed after it passed), under a time
# limit: KS_TIMEOUT seconds (default 300), or N for a script with a line
# "# timeout: N"; a test still running then is killed and fails.
#
# A test prints "ok X", "not ok X: why" and "skip X: why" lines; each
# becomes one TAP line "ok N - [test] X", "not ok N - [test] X: why" or
# "ok N - [test] X # SKIP why", printed whole when its test ends (the
# output of tests running side by side never mixes).  A test that exits
# non-zero or prints no result is one more failure.  After the last test:
# the plan "1..N", the log's place, the five slowest tests, then
# "N passed, N failed, N skipped"; exit 1 if any failed.
#
# Jobs: KS_JOBS, else make's -jN (MAKEFLAGS: `make check -j2`), else two
# per CPU.  With CI=true or KS_REQUIRE_ALL=1 a skip is a failure unless
# tests/ci-allowed-skips.txt allows it (CI has the data and the tools).
set -u
build=${1:-build}
[ $# -gt 0 ] && shift
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export KS_BUILD="$root/$build"
export KVMSCOPE="$KS_BUILD/kvmscope"
export KS_SHARED=${KS_SHARED:-$root/../shared}
# kernel sources of the name checks (scripts/install-deps.sh unpacks them)
export KS_LINUX=${KS_LINUX:-/var/cache/kvmscope-linux/linux-source-6.1}
export LSAN_OPTIONS="suppressions=$root/tests/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
# The sanitizer runtime of GCC 12 (LLVM up to 16) takes a dynamic TLS block
# whose address falls on a certain offset in its page for glibc 2.19's, and
# LeakSanitizer then crashes at exit ("Tracer caught signal 11"); dlopen()ed
# libraries with TLS (libvirt.so.0) meet it.  Without that interception LSan
# leaves dynamic TLS unscanned; kvmscope's own code keeps nothing there.
export ASAN_OPTIONS="intercept_tls_get_addr=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
timeout_default=${KS_TIMEOUT:-300}
require_all=0
[ "${CI:-}" = true ] || [ "${KS_REQUIRE_ALL:-0}" = 1 ] && require_all=1
allowed=$root/tests/ci-allowed-skips.txt

jobs=${KS_JOBS:-}
if [ -z "$jobs" ]; then
	for w in ${MAKEFLAGS:-}; do
		case $w in -j) jobs=$(nproc) ;; -j[0-9]*) jobs=${w#-j} ;; esac
	done
fi
# default: two per CPU, as many tests mostly wait (on sleeps, a QEMU
# guest, an HTTP server, a replay at a set rate): 2 x 2 on this kind of
# machine ran the suite in 101 s instead of 150 s, with the same results
[ -n "$jobs" ] && [ "$jobs" -gt 0 ] 2>/dev/null || jobs=$((2 * $(nproc)))

# The scratch base: made here and removed after a run without failures;
# a test's own directory goes as soon as it passed (the suite would leave
# ~1.2 GB otherwise).  A KS_TMP given is kept.
own_tmp=0
[ -n "${KS_TMP:-}" ] || own_tmp=1
base=${KS_TMP:-$(mktemp -d /tmp/kvmscope-test.XXXXXX)}
mkdir -p "$base"
# The tests' checkers run on Debian's python3 (scripts/install-deps.sh
# installs it, and python3-yaml): one found before it on PATH may be a
# version manager's shim, and pyenv's costs 0.1 s of CPU and up to 0.7 s
# a call, which the suite makes hundreds of times (host_model_test spent
# 96 of its 116 s there on a busy machine).
if [ -x /usr/bin/python3 ] && [ "$(command -v python3)" != /usr/bin/python3 ]; then
	mkdir -p "$base/bin"
	ln -sf /usr/bin/python3 "$base/bin/python3"
	export PATH="$base/bin:$PATH"
fi
log="$base/run.log"
times="$base/times.txt"
: > "$log"
: > "$times"
[ -d "$KS_SHARED/data" ] || echo "# note: $KS_SHARED/data is absent: tests on real recordings will skip"

names=() cmds=()
if [ $# -gt 0 ]; then
	for t in "$@"; do
		case $t in
		*.sh) names+=("$t") cmds+=("bash $t") ;;
		*) t=${t#"$KS_BUILD"/tests/}; t=${t#"$build"/tests/}; names+=("$t") cmds+=("$KS_BUILD/tests/$t") ;;
		esac
	done
else
	for t in $(find "$KS_BUILD/tests" -type f -name 'test_*' -perm -u+x | sort); do
		names+=("${t#"$KS_BUILD"/tests/}") cmds+=("$t")
	done
	for t in $(find tests -name '*_test.sh' ! -path 'tests/lab/*' | sort); do
		names+=("$t") cmds+=("bash $t")
	done
fi
# Longest first (the times of the last run in BUILD/.test-times, else of a
# reference run in tests/times.txt, as on a fresh clone, else 5 s), so that
# the slow ones do not start last.
order=()
hist=$KS_BUILD/.test-times
known=()
for f in "$root/tests/times.txt" "$hist"; do [ -s "$f" ] && known+=("$f"); done
while read -r i; do order+=("$i"); done < <(
	for i in "${!names[@]}"; do echo "$i ${names[$i]}"; done |
	awk 'FILENAME != "-" { t[$2] = $1; next }
	     { s = ($2 in t) ? t[$2] : 5; print s, $1 }' "${known[@]}" - |
	sort -k1,1rn -k2,2n | awk '{ print $2 }')

limit_of() { # NAME: the time limit of a test
	local l=""
	case $1 in *.sh) l=$(sed -n 's/^# timeout: *\([0-9][0-9]*\).*/\1/p' "$1" | head -1) ;; esac
	echo "${l:-$timeout_default}"
}

# run_test I: run test I in $base/tI; its stdout, stderr, status, seconds
# there.  Its own process group (timeout) ends with it, children and all.
run_test() {
	local i=$1 d="$base/t$1" t0=$EPOCHREALTIME rc
	mkdir -p "$d/tmp"
	# shellcheck disable=SC2086
	KS_TMP="$d/tmp" timeout -k 10 "$(limit_of "${names[$i]}")" ${cmds[$i]} \
		> "$d/out" 2> "$d/err" < /dev/null
	rc=$?
	awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f\n", b - a }' > "$d/secs"
	echo "$rc" > "$d/rc"
}

allowed_skip() { # "[TEST] X: why"
	[ -f "$allowed" ] || return 1
	grep -q -E -f <(grep -v -e '^#' -e '^[[:space:]]*$' "$allowed") <<< "$1"
}

n=0 pass=0 fail=0 skip=0
tap() { n=$((n + 1)); printf '%s %d - %s\n' "$1" "$n" "${2//#/\\#}${3:+ # $3}"; }
# report I: the TAP lines of test I (which ended)
report() {
	local i=$1 name=${names[$1]} d="$base/t$1" rc secs line x why f0=$fail results=0 own=0 limit
	rc=$(cat "$d/rc") secs=$(cat "$d/secs")
	echo "$secs $name" >> "$times"
	{ echo "== $name (exit $rc, $secs s)"; cat "$d/out"; sed 's/^/stderr: /' "$d/err"; } >> "$log"
	while IFS= read -r line; do
		case $line in
		"ok "*) results=$((results + 1)); pass=$((pass + 1)); tap ok "[$name] ${line#ok }" ;;
		"not ok"*)
			results=$((results + 1)) own=1
			fail=$((fail + 1)); tap "not ok" "[$name] ${line#not ok }" ;;
		"skip "*)
			results=$((results + 1)) x=${line#skip } why=${line#*: }
			[ "$why" != "$line" ] || why=""
			x=${x%%: *}
			if [ "$require_all" = 1 ] && ! allowed_skip "[$name] ${line#skip }"; then
				fail=$((fail + 1))
				tap "not ok" "[$name] $x: skipped, but CI runs every test not in tests/ci-allowed-skips.txt: $why"
			else
				skip=$((skip + 1)); tap ok "[$name] $x" "SKIP $why"
			fi ;;
		esac
	done < "$d/out"
	limit=$(limit_of "$name")
	if [ "$rc" = 124 ] || { [ "$rc" = 137 ] && awk -v s="$secs" -v l="$limit" 'BEGIN { exit !(s >= l) }'; }; then
		fail=$((fail + 1)); tap "not ok" "[$name] timed out after $limit s"
	elif [ "$rc" != 0 ] && [ "$own" = 0 ]; then
		fail=$((fail + 1)); tap "not ok" "[$name] exited with status $rc: $(tail -3 "$d/err" | tr '\n' ' ')"
	elif [ "$results" = 0 ]; then
		fail=$((fail + 1)); tap "not ok" "[$name] printed no ok / not ok / skip line"
	fi
	if [ "$fail" != "$f0" ]; then
		tail -5 "$d/err" | sed "s|^|# [$name] stderr: |"
		echo "# [$name] scratch kept: $d/tmp"
	else
		rm -rf "$d"
	fi
}

declare -A running=()
# interrupted: end the running tests (each timeout(1) passes the signal on
# to its test's process group, which a ^C at the terminal does not reach)
stop_all() {
	local p
	for p in "${!running[@]}"; do pkill -TERM -P "$p"; done
	wait
	echo "# interrupted; scratch kept: $base"
	exit 130
}
trap stop_all INT TERM
# reap: report a test that ended (all of them if wait names none)
reap() {
	local p=""
	wait -n -p p
	if [ -n "$p" ] && [ -n "${running[$p]:-}" ]; then
		report "${running[$p]}"
		unset "running[$p]"
		return
	fi
	wait
	for p in "${!running[@]}"; do report "${running[$p]}"; done
	running=()
}
for i in "${order[@]}"; do
	while [ "${#running[@]}" -ge "$jobs" ]; do reap; done
	run_test "$i" &
	running[$!]=$i
done
while [ "${#running[@]}" -gt 0 ]; do reap; done

echo "1..$n"
# this run's times replace the last ones of the same tests
touch "$hist" 2>/dev/null
[ -s "$times" ] && awk 'NR == FNR { t[$2] = $1; next } !($2 in t) { t[$2] = $1 } END { for (n in t) print t[n], n }' \
	"$times" "$hist" 2>/dev/null | sort -k2 > "$hist.new" && mv "$hist.new" "$hist"
if [ "$fail" -eq 0 ] && [ "$own_tmp" = 1 ]; then
	echo "# log: none kept ($base removed: no failures)"
else
	echo "# log: $log"
fi
echo "# slowest: $(sort -rn "$times" | head -5 | awk '{ printf "%s%s %s s", (NR > 1 ? ", " : ""), $2, $1 }')"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -ne 0 ] || [ "$own_tmp" = 0 ] || rm -rf "$base"
[ "$fail" -eq 0 ]
