#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""room_size.py ROOT [MAX_LINES [MAX_FUNCTION]] - the rooms of ROOT/src
that grew too big to open (issue 38): every file over MAX_LINES lines
(default 1200) and every function of a .c file over MAX_FUNCTION lines
(default 80), one line each, biggest first:

    src/input/perfdata.c: 3178 lines
    src/cli/cmd_top.c:412: top_loop(): 143 lines

A function counts from its opening '{' at column 0 to the next '}' at
column 0, both lines included (the kernel style of src/ puts both there
and nothing else does); its name is the last identifier before a '(' on
the nearest line above the '{' that has one.  Prints nothing when all fit."""
import os
import re
import sys


def functions(path):
    """(first line, name, lines) of each function of PATH"""
    with open(path, errors='replace') as f:
        lines = f.read().split('\n')
    start = None
    for i, line in enumerate(lines):
        if start is None and line.startswith('{') and i > 0:
            j = i - 1
            while j >= 0 and '(' not in lines[j]:
                j -= 1
            m = re.search(r'(\w+)\s*\(', lines[j]) if j >= 0 else None
            name, start = (m.group(1) if m else '?'), i
        elif start is not None and line.startswith('}'):
            yield start + 1, name, i - start + 1
            start = None


def main():
    root = sys.argv[1]
    max_lines = int(sys.argv[2]) if len(sys.argv) > 2 else 1200
    max_fn = int(sys.argv[3]) if len(sys.argv) > 3 else 80
    files, funcs = [], []
    for d, dirs, names in os.walk(os.path.join(root, 'src')):
        dirs.sort()
        for n in sorted(names):
            p = os.path.join(d, n)
            rel = os.path.relpath(p, root)
            with open(p, 'rb') as f:
                count = f.read().count(b'\n')
            if count > max_lines:
                files.append((count, rel))
            if n.endswith('.c'):
                funcs += [(size, rel, line, name) for line, name, size in functions(p)
                          if size > max_fn]
    for count, rel in sorted(files, key=lambda f: (-f[0], f[1])):
        print('%s: %d lines' % (rel, count))
    for size, rel, line, name in sorted(funcs, key=lambda f: (-f[0], f[1], f[2])):
        print('%s:%d: %s(): %d lines' % (rel, line, name, size))


if __name__ == '__main__':
    main()
