#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# license_test.sh - kvmscope is GPL-2.0-only: COPYING holds the GPL version
# 2 text, debian/copyright states it in the machine-readable format, and
# every tracked source, script, test, manual and build file carries an
# "SPDX-License-Identifier: GPL-2.0-only" line among its first two lines
# (after a #! or #compdef line).  Data (recordings, formats, fuzz inputs,
# fixtures) is not source and carries none.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
id='SPDX-License-Identifier: GPL-2.0-only'

if grep -q 'GNU GENERAL PUBLIC LICENSE' COPYING 2>/dev/null &&
	grep -q 'Version 2, June 1991' COPYING; then
	echo "ok COPYING holds the GPL version 2 text"
else
	echo "not ok COPYING holds the GPL version 2 text"
fi
if grep -q '^License: GPL-2.0-only$' debian/copyright &&
	! grep -qi 'not-yet-stated\|no license is granted' debian/copyright; then
	echo "ok debian/copyright states GPL-2.0-only"
else
	echo "not ok debian/copyright states GPL-2.0-only"
fi

# the files that are source: by name, as git knows them (a fresh clone)
is_source() {
	case $1 in
	tests/fuzz/corpus/* | tests/fuzz/regress/* | tests/fixtures/*) return 1 ;;
	*.c | *.h | *.sh | *.py | *.pl | *.proto | *.1 | *.bpf.c) return 0 ;;
	Makefile | */Makefile | debian/rules | .ci/run | completion/* | systemd/*) return 0 ;;
	share/*.yml | share/*.yaml | tests/*.yml | tests/*.yaml) return 0 ;;
	esac
	return 1
}
files=$(git ls-files 2>/dev/null) || { echo "skip SPDX lines: not a git checkout"; exit 0; }
n=0 bad=""
for f in $files; do
	is_source "$f" || continue
	n=$((n + 1))
	head -n 2 "$f" | grep -q "$id" || bad="$bad $f"
done
if [ "$n" -lt 200 ]; then
	echo "not ok SPDX lines: only $n source files found (the pattern list is stale?)"
elif [ -n "$bad" ]; then
	echo "not ok SPDX lines: missing in:$bad"
else
	echo "ok SPDX line in all $n tracked source files"
fi
