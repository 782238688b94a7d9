#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# room_size_test.sh - no room of src/ too big to open (issue 38): no file
# over 1200 lines, no function of a .c file over 80 lines, counted by
# tests/util/room_size.py (from the '{' at column 0 to the '}' at column
# 0).  The scanner is first run on a fixture at both edges: a file of
# 1201 lines and a function of 81 are found, a file of 1200 lines and a
# function of 80 are not, so that it cannot pass by finding nothing.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
scan="python3 $root/tests/util/room_size.py"

# ---- the scanner, on both sides of each limit
fix=${KS_TMP:-/tmp}/room_size.$$
mkdir -p "$fix/src/big" "$fix/src/fits"
# body LINES: a function "NAME" of LINES lines from '{' to '}'
fn() {
	printf 'int %s(int a)\n{\n' "$1"
	for i in $(seq $(($2 - 2))); do printf '\ta += %d;\n' "$i"; done
	printf '}\n'
}
{ fn long81 81; fn fits80 80; } > "$fix/src/big/fns.c"
seq 1201 | sed 's/^/int v/; s/$/;/' > "$fix/src/big/long.h"
seq 1200 | sed 's/^/int v/; s/$/;/' > "$fix/src/fits/edge.h"
# a struct's initialiser opens its '{' after the '=', not at column 0
{ printf 'static const int t[] = {\n'; seq 100 | sed 's/$/,/'; printf '};\n'; } > "$fix/src/fits/t.c"
got=$($scan "$fix")
want='src/big/long.h: 1201 lines
src/big/fns.c:2: long81(): 81 lines'
if [ "$got" = "$want" ]; then
	echo "ok room_size_scanner: finds a file of 1201 lines and a function of 81, not 1200 and 80"
else
	echo "not ok room_size_scanner: found '$got', expected '$want'"
fi
rm -rf "$fix"

# ---- src/
if [ ! -d "$root/src" ]; then
	echo "not ok room_size: no $root/src"
	exit 0
fi
out=$($scan "$root")
if [ -z "$out" ]; then
	echo "ok room_size: no file of src/ over 1200 lines, no function over 80"
else
	echo "not ok room_size: $(echo "$out" | grep -c ' lines$') too big: $(echo "$out" |
		grep -vc '()') file(s) over 1200 lines, $(echo "$out" | grep -c '()') function(s) over 80"
	echo "$out" | sed 's/^/#   /'
fi
