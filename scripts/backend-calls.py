#!/usr/bin/env python3
"""The calls between the files of compiler/nvptx/: which file's functions
each file calls, and the cycles among them. Exits 1 when a cycle other than
the region walk (kernel.c, control.c, scan.c, pipeline.c: an op's code emits
the ops of its regions, and a pipelined loop emits its body's address
arithmetic again for later iterations) appears, so planning and emission
stay layered (docs/architecture.md).

    scripts/backend-calls.py            the cycles, and their calls
    scripts/backend-calls.py --graph    every file's callees too
"""
import glob
import os
import re
import sys

REGION_WALK = {"kernel.c", "control.c", "scan.c", "pipeline.c"}


def graph(folder):
    files = sorted(os.path.basename(p) for p in glob.glob(os.path.join(folder, "*.c")))
    text = {}
    for f in files:
        with open(os.path.join(folder, f)) as fh:
            text[f] = re.sub(r"/\*.*?\*/", "", fh.read(), flags=re.S)
    defined = {}
    for f in files:  # a definition: the name at a line's start with its body's brace
        for m in re.finditer(r"^[A-Za-z][\w \*]*?\b(nvptx_\w+)\s*\([^;{]*\)\s*\{", text[f], re.M):
            defined[m.group(1)] = f
    edges = {f: {} for f in files}
    for f in files:
        for m in re.finditer(r"\b(nvptx_\w+)\s*\(", text[f]):
            d = defined.get(m.group(1))
            if d and d != f:
                edges[f].setdefault(d, set()).add(m.group(1))
    return files, edges


def cycles(files, edges):
    """Strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in files:
        if v not in index:
            visit(v)
    return out


def main():
    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "compiler", "nvptx")
    files, edges = graph(folder)
    if "--graph" in sys.argv:
        for f in files:
            print(f, "->", ", ".join(sorted(edges[f])) or "(nothing)")
    bad = False
    for comp in cycles(files, edges):
        allowed = set(comp) <= REGION_WALK
        bad |= not allowed
        print("cycle%s: %s" % (" (the region walk)" if allowed else "", " ".join(comp)))
        for a in comp:
            for b in sorted(edges[a]):
                if b in comp:
                    print("   %s -> %s: %s" % (a, b, ", ".join(sorted(edges[a][b]))))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
