#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# include_layers_test.sh - arrows in src/ only point down, and never in a
# circle.
#
# The layers, from the top down (each may use those below it, never one
# above):
#   cli       one file per command, the process's own state
#   output    all formatting (text, JSON, CSV, Perfetto, trace.dat writer)
#   analysis  the host model and the engines; never prints
#   unwind    guest stacks (used by cli and output; uses symbols)
#   symbols   ELF and kallsyms symbol tables (used by analysis and unwind)
#   input     the readers (perf.data, trace.dat, ftrace text, live)
#   event     event formats: the format guard, deferred formats (lazy
#             lookup), compiled print formats (print_plan)
#   arch      the only place that knows an architecture: tables
#   util      hash tables, fields, errors, limits, files
# tests/util/include_layers.py computes the include graph (quoted
# includes, each resolved to the files that define what the includer takes
# from the header) and prints every arrow up this order and every circle
# of files.  It is first run on a small fixture with one of each.
#
# Also here: no architecture is named outside src/arch (an engine that
# compares an architecture's name, or takes one architecture's table, has
# its own architecture knowledge).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
scan="python3 $root/tests/util/include_layers.py"
order="cli output analysis unwind symbols input event arch util"

# ---- the scanner, on one case of each kind and what it must let through
fix=${KS_TMP:-/tmp}/include_layers.$$
mkdir -p "$fix/src/util" "$fix/src/arch" "$fix/src/input" "$fix/include/kvmscope"
printf 'int u_a(void);\n' > "$fix/src/util/a.h"
printf '#include "a.h"\n#include "b.h"\nint u_a(void) { return u_b(); }\n' > "$fix/src/util/a.c"
printf 'int u_b(void);\n' > "$fix/src/util/b.h"
printf '#include "b.h"\n#include "a.h"\nint u_b(void) { return u_a(); }\n' > "$fix/src/util/b.c"
# down: fine; up (util -> arch): found; a public header of types only: util
printf 'struct t { int x; };\n' > "$fix/include/kvmscope/types.h"
printf 'int r_x(void);\nint i_y(void);\n' > "$fix/include/kvmscope/mixed.h"
printf '#include "kvmscope/types.h"\n#include "util/a.h"\nint r_x(void) { return u_a(); }\n' > "$fix/src/arch/x.c"
printf '#include "kvmscope/mixed.h"\nint i_y(void) { return r_x(); }\n' > "$fix/src/input/y.c"
printf '#include "kvmscope/mixed.h"\nint u_c(void) { return r_x(); }\n' > "$fix/src/util/c.c"
# a room split by job (r.c, r_io.c share r_impl.h, no one else includes
# it) is one module, whatever its files call of each other; a private
# header others include too (s_impl.h) is not a room: s.c <-> s_x.c is a
# circle
printf 'int i_r(void);\nint i_rio(void);\n' > "$fix/src/input/r_impl.h"
printf '#include "r_impl.h"\nint i_r(void) { return i_rio(); }\n' > "$fix/src/input/r.c"
printf '#include "r_impl.h"\nint i_rio(void) { return i_r(); }\n' > "$fix/src/input/r_io.c"
printf 'int i_s(void);\nint i_sx(void);\n' > "$fix/src/input/s_impl.h"
printf '#include "s_impl.h"\nint i_s(void) { return i_sx(); }\n' > "$fix/src/input/s.c"
printf '#include "s_impl.h"\nint i_sx(void) { return i_s(); }\n' > "$fix/src/input/s_x.c"
printf '#include "s_impl.h"\nint i_z(void) { return i_s(); }\n' > "$fix/src/input/z.c"
got=$($scan "$fix" "$order" | sed 's/ (.*//')
want='up: util/c -> arch/x
circle: input/s input/s_x
circle: util/a util/b'
if [ "$got" = "$want" ]; then
	echo "ok include_layers_scanner: finds an arrow up and circles, lets arrows down and rooms through"
else
	echo "not ok include_layers_scanner: found '$got', expected '$want'"
fi
rm -rf "$fix"

# ---- src/
if [ ! -d "$root/src" ]; then
	echo "not ok include_layers: no $root/src"
	exit 0
fi
out=$($scan "$root" "$order")
if [ -z "$out" ]; then
	echo "ok include_layers: arrows point down only ($order), no circle"
else
	echo "not ok include_layers: $(echo "$out" | wc -l) finding(s):"
	echo "$out" | head -30 | sed 's/^/#   /'
	echo "# layers now:"
	$scan "$root" "$order" --diagram | sed 's/^/#   /'
fi

# ---- architecture names outside src/arch (comments aside)
names=$(python3 - "$root" <<'PY'
import os, re, sys
root = sys.argv[1]
arches = 'x86|arm64|powerpc|s390|riscv|loongarch'
pat = re.compile(r'"(%s)"|\bks_arch_(%s)\b' % (arches, arches))
for d, _, names in os.walk(os.path.join(root, 'src')):
    if os.path.relpath(d, root).split(os.sep)[:2] == ['src', 'arch']:
        continue
    for n in sorted(names):
        if not n.endswith(('.c', '.h')):
            continue
        p = os.path.join(d, n)
        text = re.sub(r'/\*.*?\*/', lambda m: '\n' * m.group(0).count('\n'),
                      open(p, errors='replace').read(), flags=re.S)
        for i, line in enumerate(text.split('\n'), 1):
            line = re.sub(r'//.*', '', line)
            if pat.search(line):
                print('%s:%d: %s' % (os.path.relpath(p, root), i, line.strip()))
PY
)
if [ -z "$names" ]; then
	echo "ok arch_names_in_arch_only: no architecture named outside src/arch"
else
	echo "not ok arch_names_in_arch_only: $(echo "$names" | wc -l) place(s):"
	echo "$names" | head -20 | sed 's/^/#   /'
fi
