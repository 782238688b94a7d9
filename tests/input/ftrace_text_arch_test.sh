#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# ftrace_text_arch_test.sh - the ftrace text reader knows no architecture:
# its files (src/input/ftrace_text*) include no architecture's own header
# and use none of one architecture's names (x86's ISA values, exit flags,
# helpers), nor pick "the architecture of the kvm plugin" to decode exits.
# What an architecture's event text says is its table in src/arch
# (struct ks_arch text_layouts, src/arch/text_layout.h); the reader only
# runs the tables.  (tests/util/include_layers_test.sh checks that no file
# outside src/arch names an architecture; this checks the reader for the
# knowledge itself.)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
found=$(python3 - "$root" <<'PY'
import glob, os, re, sys
root = sys.argv[1]
pat = re.compile(r'#include\s+"arch/(?!arch\.h|text_layout\.h)[^"]*"|\bKS_ISA_\w+|\bKS_X86_\w+'
                 r'|\bks_x86_\w+|\bks_arch_tep_kvm_plugin\b')
files = sorted(glob.glob(os.path.join(root, 'src/input/ftrace_text*.[ch]')))
if not files:
    print('no src/input/ftrace_text* files')
for p in files:
    text = re.sub(r'/\*.*?\*/', lambda m: '\n' * m.group(0).count('\n'),
                  open(p, errors='replace').read(), flags=re.S)
    for i, line in enumerate(text.split('\n'), 1):
        m = pat.search(line)
        if m:
            print('%s:%d: %s' % (os.path.relpath(p, root), i, m.group(0)))
PY
)
if [ -z "$found" ]; then
	echo "ok ftrace_text_arch_free: the reader's files include no architecture header and use no architecture's names"
else
	echo "not ok ftrace_text_arch_free: $(echo "$found" | wc -l) place(s): $(echo "$found" | head -5 | tr '\n' ' ')"
fi
