#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# readme_tour_test.sh - the README's tour shows real output: every "$ "
# command of its ```console blocks is run (kvmscope being the binary under
# test, ../shared the shared recordings) and its standard output must be
# the lines the README shows after it, byte for byte.
set -u
K=${KVMSCOPE:?}
S=${KS_SHARED:-../shared}
T=${KS_TMP:?}/tour
root=$(pwd)
if [ ! -d "$S/data/hip24" ]; then
	echo "skip readme_tour: $S/data is not present"
	exit 0
fi
mkdir -p "$T/work"
ln -sfn "$(cd "$S" && pwd)" "$T/shared"
# the blocks as files: N.cmd (the command) and N.exp (its lines)
awk -v dir="$T" '
	/^```console$/ { inblock = 1; next }
	/^```$/ { inblock = 0; next }
	inblock && /^\$ / { n++; cmd = dir "/" n ".cmd"; ef = dir "/" n ".exp";
			   print substr($0, 3) > cmd; close(cmd); printf "" > ef; next }
	inblock && n { print >> ef; close(ef) }
' "$root/README.md"
n=0
for c in "$T"/*.cmd; do
	[ -e "$c" ] || break
	n=$((n + 1))
	e=${c%.cmd}.exp
	name=$(cut -c1-60 "$c")
	(cd "$T/work" && kvmscope() { "$K" "$@"; } && export -f kvmscope && export K &&
		bash -c "$(cat "$c")") > "${c%.cmd}.out" 2> "${c%.cmd}.err"
	if cmp -s "$e" "${c%.cmd}.out"; then
		echo "ok readme_tour: $name"
	else
		echo "not ok readme_tour: $name: output differs from the README:"
		diff "$e" "${c%.cmd}.out" | head -6 | sed 's/^/#   /'
	fi
done
[ "$n" -gt 0 ] || echo "not ok readme_tour: no console block found in README.md"
exit 0
