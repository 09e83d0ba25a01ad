#!/usr/bin/env python3
"""Import graph of crates/testserver/src: which module file refers to which (`crate::`,
`super::` and `self::` paths, `use` groups included, and a parent's children named relatively;
comments and test modules excluded), and its strongly connected components. The crate is layered
(see the request path in its lib.rs): each module imports only modules below it, so no component
may hold more than one file. Prints the components and exits 1 when there is one (CI runs it).

Paths through the crate root's re-exports (`crate::ApiServer`) are not followed: modules name
each other by their own paths.

Usage: hack/testserver-import-graph.py [src-dir] [--edges]
"""
import os
import re
import sys

DEFAULT_SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crates", "testserver", "src")
src = next((a for a in sys.argv[1:] if not a.startswith("--")), DEFAULT_SRC)
show_edges = "--edges" in sys.argv


def module_of(path):
    rel = os.path.relpath(path, src)[:-3]
    parts = rel.split(os.sep)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return tuple(parts)


files = {}
for root, _, names in os.walk(src):
    for n in names:
        if n.endswith(".rs") and not n.endswith("_tests.rs") and n != "main.rs":
            p = os.path.join(root, n)
            files[module_of(p)] = p

mods = set(files)


def strip_tests(text):
    text = re.sub(r"//[^\n]*", "", text)
    m = re.search(r"#\[cfg\(test\)\]\s*(#\[path[^\]]*\]\s*)?mod tests", text)
    return text[: m.start()] if m else text


def expand(prefix, body):
    """`a::{b, c::{d}}` → ['a::b', 'a::c::d']."""
    out, depth, cur = [], 0, ""
    for ch in body:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    paths = []
    for item in out:
        item = item.strip()
        if not item:
            continue
        m = re.match(r"^([\w:]*?)::\{(.*)\}$", item, re.S)
        if m:
            paths += expand(prefix + [m.group(1)], m.group(2))
        elif item.startswith("{"):
            paths += expand(prefix, item[1:-1])
        else:
            paths.append("::".join(prefix + [item.split(" as ")[0]]))
    return paths


def resolve(mod, path):
    segs = [s for s in path.split("::") if s]
    if not segs:
        return None
    if segs[0] == "crate":
        base, segs = [], segs[1:]
    elif segs[0] == "super":
        base, segs = list(mod[:-1]), segs[1:]
        while segs and segs[0] == "super":
            base, segs = base[:-1], segs[1:]
    elif segs[0] == "self":
        base, segs = list(mod), segs[1:]
    else:
        return None
    best = None
    for i in range(len(segs) + 1):
        cand = tuple(base + segs[:i])
        if cand in mods:
            best = cand
    return best


edges = {m: set() for m in mods}
for mod, path in files.items():
    text = strip_tests(open(path).read())
    paths = []
    for m in re.finditer(r"\buse\s+((?:crate|super|self)[^;]*);", text, re.S):
        u = re.sub(r"\s+", "", m.group(1))
        mm = re.match(r"^([\w:]*?)::\{(.*)\}$", u)
        paths += expand([mm.group(1)], mm.group(2)) if mm else [u]
    paths += re.findall(r"\b((?:crate|super)(?:::\w+)+)", text)
    # A parent's own children, named relatively (`use negotiate::Format`, `builtin::get()`).
    for child in (m for m in mods if len(m) == len(mod) + 1 and m[: len(mod)] == mod):
        if re.search(r"(?<![:\w])" + child[-1] + r"::", text):
            paths.append("self::" + child[-1])
    for p in paths:
        target = resolve(mod, p)
        if target is not None and target != mod and target != ():
            edges[mod].add(target)

# Tarjan
index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]
sys.setrecursionlimit(10000)


def visit(v):
    index[v] = low[v] = counter[0]
    counter[0] += 1
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
        sccs.append(comp)


for v in sorted(mods):
    if v not in index:
        visit(v)

name = lambda m: "/".join(m) or "lib"
if show_edges:
    for m in sorted(edges):
        print(f"{name(m)} -> {', '.join(sorted(name(t) for t in edges[m]))}")
big = [sorted(c) for c in sccs if len(c) > 1]
print(f"{len(mods)} modules, {sum(len(e) for e in edges.values())} edges, "
      f"{len(big)} import cycle(s)")
for c in big:
    print(f"  cycle of {len(c)}: {', '.join(name(m) for m in c)}")
sys.exit(1 if big else 0)
