#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""include_layers.py ROOT ORDER [--diagram] - the include graph of ROOT/src.

Nodes are modules: src/DIR/NAME.c with its src/DIR/NAME.h; a module split
into several files by job shares a private header src/DIR/NAME_impl.h, and
the files NAME.c and NAME_*.c that include it, when no other file does, are
that one module.  Each quoted
#include of a .c or .h under ROOT/src or ROOT/include/kvmscope is resolved
as the compiler does (the including file's directory, then include/, then
src/) to a header, and the header to the modules that define what the
includer takes from it: the functions it declares that the includer names
(a public header such as kvmscope/source.h declares functions of several
files).  An include that takes only types or macros is an arrow to the
header's own module: the one that defines most of its functions, else the
header itself (a header of types only: src/DIR/NAME.h is in DIR, a public
one such as kvmscope/record.h in the lowest layer, util).

ORDER lists the layers (the directories of src/) from the top down.
Printed, one finding a line:
  up: A -> B (FILE includes HEADER)   an arrow from a lower layer up
  circle: A B C ...                   modules that reach each other
With --diagram, the arrows between layers instead.  Exit status 0.
"""
import os
import re
import sys


def read(root, f):
    with open(os.path.join(root, f), errors='replace') as fh:
        text = fh.read()
    text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)   # comments
    return re.sub(r'//[^\n]*', ' ', text)


def main():
    root, order = sys.argv[1], sys.argv[2].split()
    diagram = '--diagram' in sys.argv[3:]
    files = []
    for d, _, names in os.walk(os.path.join(root, 'src')):
        files += [os.path.relpath(os.path.join(d, n), root) for n in names
                  if n.endswith(('.c', '.h'))]
    pub = os.path.join(root, 'include', 'kvmscope')
    if os.path.isdir(pub):
        files += ['include/kvmscope/' + n for n in os.listdir(pub) if n.endswith('.h')]
    files.sort()
    text = {f: read(root, f) for f in files}

    # the rooms split into files: DIR/NAME_impl.h -> the files including it
    # (a header only NAME.c and NAME_*.c include: source_impl.h, which
    # every reader includes, is an interface, not a room)
    room, outside = {}, set()
    for f in files:
        if f.startswith('src/') and f.endswith('.c'):
            base = os.path.basename(f)[:-2]
            here = os.path.dirname(f)[len('src/'):]
            for m in re.finditer(r'^\s*#\s*include\s+"((?:\w+/)?)(\w+)_impl\.h"', text[f], re.M):
                name = os.path.join(m.group(1).rstrip('/') or here, m.group(2))
                if os.path.dirname(name) == here and \
                        (base == m.group(2) or base.startswith(m.group(2) + '_')):
                    room[f] = name
                else:
                    outside.add(name)
    room = {f: r for f, r in room.items() if r not in outside}

    def module(f):
        if f in room:
            return room[f]
        if f.startswith('src/') and f.endswith('_impl.h') and \
                f[len('src/'):-len('_impl.h')] in room.values():
            return f[len('src/'):-len('_impl.h')]
        return os.path.splitext(f[len('src/'):])[0] if f.startswith('src/') else None

    # functions defined (not static) in each module
    defs = {}
    for f in files:
        if f.endswith('.c'):
            for m in re.finditer(r'^(?!static\b)[A-Za-z_][^;=(#]*?\b(\w+)\([^;{]*\)\s*\{',
                                 text[f], re.M):
                defs.setdefault(m.group(1), set()).add(module(f))
    decl, home = {}, {}
    for f in files:
        if f.endswith('.c'):
            home[f] = module(f)
            continue
        names = [m.group(1) for m in re.finditer(r'^[A-Za-z_][^;=(#]*?\b(\w+)\(', text[f], re.M)]
        decl[f] = {n for n in names if n in defs}
        count = {}
        for n in names:
            for mod in defs.get(n, ()):
                count[mod] = count.get(mod, 0) + 1
        if count:
            home[f] = max(sorted(count), key=lambda k: count[k])
        elif f.startswith('src/'):
            home[f] = module(f)
        else:
            home[f] = order[-1] + '/' + os.path.basename(f)

    def resolve(frm, inc):
        for base in (os.path.dirname(frm), 'include', 'src'):
            p = os.path.normpath(os.path.join(base, inc))
            if p in text:
                return p
        return None

    edges = {}
    for f in files:
        words = None
        for m in re.finditer(r'^\s*#\s*include\s+"([^"]+)"', text[f], re.M):
            h = resolve(f, m.group(1))
            if not h:
                continue          # generated (perfetto_trace.pb-c.h) or outside
            if decl.get(h):
                if words is None:
                    # names, not tags: struct ks_profile_totals is a type,
                    # whatever function shares its name
                    words = set(re.findall(r'(?<!struct )(?<!union )(?<!enum )\b(\w+)',
                                           text[f]))
                to = set().union(*[defs[n] for n in decl[h] & words]) or {home[h]}
            else:
                to = {home[h]}
            for b in to:
                if b != home[f]:
                    edges.setdefault(home[f], {}).setdefault(b, '%s includes %s' % (f, h))

    def layer(mod):
        d = mod.split('/')[0]
        return order.index(d) if d in order else -1

    if diagram:
        arrows = {}
        for a in edges:
            for b in edges[a]:
                if a.split('/')[0] != b.split('/')[0]:
                    arrows.setdefault(a.split('/')[0], set()).add(b.split('/')[0])
        for d in order:
            below = sorted(arrows.get(d, ()), key=lambda x: (layer(x + '/'), x))
            print('%-9s -> %s' % (d, ' '.join(below) if below else '(nothing)'))
        return
    for a in sorted(edges):
        if layer(a) < 0:
            print('up: %s is in no layer of the order (%s)' % (a, ' '.join(order)))
        for b in sorted(edges[a]):
            if layer(b) >= 0 and layer(a) > layer(b):
                print('up: %s -> %s (%s)' % (a, b, edges[a][b]))

    # circles: strongly connected components (Tarjan, iterative)
    index, low, stack, on, comps, n = {}, {}, [], set(), [], 0
    for start in sorted(set(home.values())):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = n
        n += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = n
                    n += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    comps.append(sorted(comp))
    for c in sorted(comps):
        print('circle: ' + ' '.join(c))


main()
