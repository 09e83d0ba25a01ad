#!/usr/bin/env python3
"""Keeps the module maps in every crate's root file true (STYLE.md rule 19).

Each crate's root file (`lib.rs`, or `main.rs` for a binary-only crate) declares its layers in a doc
section of this shape, top to bottom, one bullet per row, names being the root's child modules:

    //! # Layers
    //! Top to bottom; a module imports only modules in its own row or rows below it, and no two
    //! modules import each other (`hack/import-layers.py` checks both).
    //! - `manager`, `builder`
    //! - `controller`
    //! - `error`, `metrics`

A folder module (`foo/mod.rs`, or `foo.rs` beside `foo/`) may declare its own children's layers the
same way; a folder without such a section gets the cycle check only.

For every crate this script builds the graph of which module file refers to which (`crate::`,
`super::` and `self::` paths, `use` groups, a parent's children named relatively, and names a
parent re-exports followed to the child that defines them; comments, string literals, `quote!`
bodies and `#[cfg(test)]` items excluded, `*_tests.rs` files too) and checks:

  (a) no import cycle between module files, except through edges whose every occurrence carries
      `// import-cycle: <why this is recursion>` on its line (or its `use` line); a marker on an
      edge that closes no cycle is reported as stale;
  (b) every crate root with child modules declares `# Layers` (generated crates, whose root file
      says `@generated`, are exempt: their layout is the generator's), and
      every child module of a folder with a `# Layers` section is in exactly one row, every row
      names existing children, and each import between two children's subtrees goes to the same
      row or a row below; a child that refers to an item its parent defines itself (not a
      re-export) imports upward, which is reported too.

Prints one line per crate, OK or the offending edges with file:line, and exits 1 on any failure.

Usage: hack/import-layers.py [--crate PATH]... [--edges] [--self-test]
  --crate PATH   check only the crate in PATH (a folder with Cargo.toml); repeatable.
                 Without it, every member of the root Cargo.toml's [workspace] is checked.
  --edges        also print each module's import edges.
  --self-test    run this script's own tests (hack/import_layers_tests.py).
"""
import os
import re
import sys
import tomllib

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
MARKER = "import-cycle:"


# ---------------------------------------------------------------------------------------------
# Lexing: blank out what is not code, keeping offsets (so line numbers stay right).


def blank_non_code(text):
    """Comments, string and char literals replaced by spaces (newlines kept). Returns the code and
    the set of line numbers (1-based) whose comment carries the import-cycle marker."""
    out = list(text)
    marked = set()
    i, n, line = 0, len(text), 1

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            if MARKER in text[i:j]:
                marked.add(line)
            blank(i, j)
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            line += text.count("\n", i, j)
            blank(i, j)
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 260]) and not re.search(r"(?:[\w]b|[^\Wb])$", text[max(0, i - 2):i]):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            j = n if end < 0 else end + 1 + len(hashes)
            line += text.count("\n", i, j)
            blank(i, j)
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j += 1
            line += text.count("\n", i, j)
            blank(i, j)
            i = j
        elif c == "'":
            # A char literal ('a', '\n', '\u{1F600}'), not a lifetime ('a).
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", text[i:i + 12])
            if m:
                blank(i, i + m.end())
                i += m.end()
            else:
                i += 1
        else:
            i += 1
    return "".join(out), marked


def matching(code, i):
    """Index just past the bracket that closes the one at `code[i]`."""
    pairs = {"{": "}", "(": ")", "[": "]"}
    stack = [pairs[code[i]]]
    j = i + 1
    while j < len(code) and stack:
        c = code[j]
        if c in pairs:
            stack.append(pairs[c])
        elif c in ")]}":
            stack.pop()
        j += 1
    return j


def item_end(code, i):
    """End of the item starting at `i`: its `;` at bracket depth 0, or its first top-level block."""
    j = i
    while j < len(code):
        c = code[j]
        if c == ";":
            return j + 1
        if c == "{":
            return matching(code, j)
        if c in "([":
            j = matching(code, j)
            continue
        j += 1
    return j


def blank_span(code, a, b):
    return code[:a] + "".join(ch if ch == "\n" else " " for ch in code[a:b]) + code[b:]


def strip_tests_and_macros(code):
    """`#[cfg(test)]` items and the bodies of `quote!`-like macros (generated code) blanked."""
    for m in reversed(list(re.finditer(r"#\s*\[\s*cfg\s*\(\s*test\s*\)\s*\]", code))):
        j = m.end()
        while True:
            k = re.match(r"\s*#\s*\[", code[j:])
            if not k:
                break
            j = matching(code, j + k.end() - 1)
        code = blank_span(code, m.start(), item_end(code, j))
    for m in reversed(list(re.finditer(r"\b(quote|quote_spanned|parse_quote)\s*!\s*([({\[])", code))):
        code = blank_span(code, m.start(), matching(code, m.end() - 1))
    return code


# ---------------------------------------------------------------------------------------------
# Modules of one crate target.


class Module:
    def __init__(self, path, file):
        self.path = path  # tuple of names from the target root, () for the root
        self.file = file
        self.children = []  # names, in declaration order
        self.code = ""
        self.marked = set()
        self.text = ""
        self.reexports = {}  # name -> path of each `use` leaf (segments, relative to this module)
        self.defines = set()  # names of items defined in this file


def line_of(code, offset):
    return code.count("\n", 0, offset) + 1


def child_file(parent_file, parent_path, name, is_dir_owner):
    """The file of child module `name`: `dir/name.rs` or `dir/name/mod.rs`."""
    base = os.path.dirname(parent_file)
    if not is_dir_owner:
        base = os.path.join(base, os.path.basename(parent_file)[:-3])
    for cand in (os.path.join(base, name + ".rs"), os.path.join(base, name, "mod.rs")):
        if os.path.isfile(cand):
            return cand
    return None


def load_target(root_file):
    """All module files reachable from `root_file` through `mod name;` declarations."""
    mods = {}

    def load(path, file):
        m = Module(path, file)
        m.text = open(file, encoding="utf-8").read()
        code, m.marked = blank_non_code(m.text)
        m.code = strip_tests_and_macros(code)
        mods[path] = m
        is_dir_owner = not path or os.path.basename(file) == "mod.rs"
        for d in re.finditer(r"(?:#\s*\[\s*path\s*=\s*\S+\s*\]\s*)?\b(?:pub(?:\s*\([^)]*\))?\s+)?mod\s+(\w+)\s*;", m.code):
            name = d.group(1)
            f = child_file(file, path, name, is_dir_owner)
            if f is None:
                continue
            m.children.append(name)
            load(path + (name,), f)
        # Inline (non-test) modules are part of this file: nothing to do.

    load((), root_file)
    for m in mods.values():
        scan_reexports_and_defs(m)
    return mods


ITEM_DEF = re.compile(
    r"\b(?:fn|struct|enum|trait|type|const|static|union|macro_rules!)\s+(\w+)")


def scan_reexports_and_defs(m):
    m.defines = set(ITEM_DEF.findall(m.code)) - set(m.children)
    # Private imports count too: a child sees its parent's `use` items through `super::`.
    for u in iter_use(m.code):
        for path, alias, _ in u["leaves"]:
            if path and path[-1] not in ("*", "self"):
                m.reexports[alias or path[-1]] = path


USE = re.compile(r"\b(pub(?:\s*\([^)]*\))?\s+)?use\s+")
TOKEN = re.compile(r"\s*(::|\{|\}|,|\*|\w+|;)")


def iter_use(code):
    """Each `use` item: its leaves as (segments, alias, offset of the leaf's last segment)."""
    for m in USE.finditer(code):
        pos = m.end()
        toks = []
        while True:
            t = TOKEN.match(code, pos)
            if not t:
                break
            pos = t.end()
            if t.group(1) == ";":
                break
            toks.append((t.group(1), t.start(1)))
        leaves = []
        parse_tree(toks, 0, [], leaves)
        yield {"pub": bool(m.group(1)), "start": m.start(), "leaves": leaves}


def parse_tree(toks, i, prefix, leaves):
    """Parses one use tree at toks[i]; appends its leaves; returns the index after it."""
    segs, last = list(prefix), None
    while i < len(toks):
        tok, off = toks[i]
        if tok == "{":
            i += 1
            while i < len(toks) and toks[i][0] != "}":
                i = parse_tree(toks, i, segs, leaves)
                if i < len(toks) and toks[i][0] == ",":
                    i += 1
            return i + 1
        if tok == "::":
            i += 1
            continue
        if tok in (",", "}"):
            break
        if tok == "as":
            alias = toks[i + 1][0] if i + 1 < len(toks) else None
            leaves.append((segs, alias, last))
            return i + 2
        segs = segs + [tok]
        last = off
        i += 1
    if segs != list(prefix) or last is not None:
        leaves.append((segs, None, last))
    return i


# ---------------------------------------------------------------------------------------------
# Resolution and edges.


def resolve(mods, mod, segs, depth=0):
    """The module file a path from module `mod` refers to and the rest of the path, or None when
    it leaves the crate. Follows names re-exported by a parent to the child that defines them."""
    if not segs:
        return None
    if segs[0] == "crate":
        base, rest = (), segs[1:]
    elif segs[0] == "super":
        base, rest = mod[:-1], segs[1:]
        while rest and rest[0] == "super":
            base, rest = base[:-1], rest[1:]
    elif segs[0] == "self":
        base, rest = mod, segs[1:]
    elif mod + (segs[0],) in mods:
        base, rest = mod, segs
    else:
        return None
    cur = base
    while rest and cur + (rest[0],) in mods:
        cur, rest = cur + (rest[0],), rest[1:]
    if rest and depth < 8:
        target = mods[cur].reexports.get(rest[0])
        if target is not None:
            via = resolve(mods, cur, target + rest[1:], depth + 1)
            if via is not None:
                return via
            if target and target[0] not in ("crate", "super", "self") and cur + (target[0],) not in mods:
                return cur, []  # re-exported from outside the crate: nothing of the parent's own
    return cur, rest


PATH = re.compile(r"(?<![\w:])((?:crate|super|self)(?:\s*::\s*\w+)+)")


def edges_of(mods, mod):
    """{target: [(line, marked)]} for the module file `mod`."""
    m = mods[mod]
    refs = []  # (segments, offset, use-line offset)
    use_spans = []
    for u in iter_use(m.code):
        end = m.code.find(";", u["start"])
        use_spans.append((u["start"], end))
        for segs, _, off in u["leaves"]:
            if segs and off is not None:
                refs.append((segs, off, u["start"]))
    for p in PATH.finditer(m.code):
        if any(a <= p.start() < b for a, b in use_spans):
            continue
        refs.append((re.sub(r"\s+", "", p.group(1)).split("::"), p.start(), None))
    for child in m.children:
        for p in re.finditer(r"(?<![:\w])" + child + r"\s*::", m.code):
            if any(a <= p.start() < b for a, b in use_spans):
                continue
            refs.append(([child, "_"], p.start(), None))
    out = {}
    for segs, off, use_off in refs:
        found = resolve(mods, mod, segs)
        if found is None or found[0] == mod:
            continue
        target, rest = found
        # A path that ends on an ancestor (its own file, not one of its children) refers to an item
        # the ancestor defines (an upward import) or, when the ancestor does not define the name, to
        # something from outside the crate it re-exports: only the former is an edge.
        if mod[: len(target)] == target:
            if rest and rest[0] != "*" and rest[0] not in mods[target].defines:
                continue
            if not rest or (rest[0] == "*" and not mods[target].defines):
                continue
        line = line_of(m.code, off)
        lines = {line}
        if use_off is not None:
            lines.add(line_of(m.code, use_off))
        marked = any(l in m.marked for l in lines)
        out.setdefault(target, []).append((line, marked))
    # A parent's own `mod child;` is not an import; its `pub use child::X` is (counted above).
    return out


# ---------------------------------------------------------------------------------------------
# Layers section.


def layers_of(text):
    """Rows of the `# Layers` doc section of a file's inner docs, or None when there is none."""
    lines = [l.strip() for l in text.splitlines()]
    rows, inside = None, False
    for i, l in enumerate(lines):
        if not l.startswith("//!"):
            if inside:
                break
            continue
        body = l[3:].strip()
        if re.match(r"^#+\s*Layers\s*$", body):
            rows, inside = [], True
            continue
        if inside:
            if body.startswith("#"):
                break
            if body.startswith("- "):
                names = re.findall(r"`(\w+)`", body)
                rows.append((names, i + 1))
    return rows


# ---------------------------------------------------------------------------------------------
# Checks.


def tarjan(nodes, edges):
    index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
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

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return sccs


def reaches(edges, src, dst):
    seen, todo = {src}, [src]
    while todo:
        v = todo.pop()
        if v == dst:
            return True
        for w in edges.get(v, ()):
            if w not in seen:
                seen.add(w)
                todo.append(w)
    return False


def check_target(root_file, crate_dir, require_layers, show_edges=False):
    """Problems (strings) of one target (a lib.rs, main.rs or bin/*.rs and its modules)."""
    mods = load_target(root_file)
    rel = lambda f: os.path.relpath(f, ROOT)
    name = lambda p: "::".join(p) or "crate"
    problems = []
    refs = {p: edges_of(mods, p) for p in mods}
    # An edge is exempt from both checks only when every occurrence is marked.
    live = {p: {t for t, occ in e.items() if not all(mk for _, mk in occ)} for p, e in refs.items()}
    full = {p: set(e) for p, e in refs.items()}
    if show_edges:
        for p in sorted(mods):
            if full[p]:
                print(f"  {name(p)} -> {', '.join(sorted(name(t) for t in full[p]))}")

    def where(src, dst, only_unmarked=True):
        occ = [l for l, mk in refs[src][dst] if not (only_unmarked and mk)]
        return f"{rel(mods[src].file)}:{min(occ) if occ else min(l for l, _ in refs[src][dst])}"

    graph = live
    for comp in tarjan(mods, graph):
        if len(comp) < 2:
            continue
        comp_set = set(comp)
        lines = [f"import cycle: {', '.join(name(c) for c in sorted(comp))}"]
        for s in sorted(comp):
            for t in sorted(graph[s] & comp_set):
                lines.append(f"    {name(s)} -> {name(t)}  ({where(s, t)})")
        problems.append("\n".join(lines))
    # Stale markers: a marked edge must close a cycle.
    for s in sorted(mods):
        for t, occ in sorted(refs[s].items()):
            if any(mk for _, mk in occ) and not reaches(full, t, s):
                lines = [l for l, mk in occ if mk]
                problems.append(f"import-cycle marker on an edge that closes no cycle: {name(s)} -> "
                                f"{name(t)} ({rel(mods[s].file)}:{min(lines)})")

    # Layers.
    folders = [p for p in mods if mods[p].children]
    root_rows = layers_of(mods[()].text)
    # A root without child modules has nothing to order, and a generated crate's layout is its
    # generator's (the cycle check still runs on it).
    generated = "@generated" in mods[()].text[:2000]
    if root_rows is None and require_layers and mods[()].children and not generated:
        problems.append(f"no `# Layers` section in {rel(root_file)}")
    for f in sorted(folders):
        rows = root_rows if f == () else layers_of(mods[f].text)
        if rows is None:
            continue
        problems += check_rows(mods, f, rows, live, where, name, rel)
    return problems


def check_rows(mods, folder, rows, live, where, name, rel):
    problems = []
    file = rel(mods[folder].file)
    children = mods[folder].children
    row_of = {}
    for r, (names, line) in enumerate(rows):
        for n in names:
            if n in row_of:
                problems.append(f"{file}:{line}: `{n}` is in more than one row of `# Layers`")
            elif n not in children:
                problems.append(f"{file}:{line}: `# Layers` names `{n}`, which is not a child module "
                                f"of {name(folder)}")
            else:
                row_of[n] = r
    for c in children:
        if c not in row_of:
            problems.append(f"{file}: child module `{c}` is in no row of `# Layers`")
    d = len(folder)
    for src in sorted(mods):
        if len(src) <= d or src[:d] != folder:
            continue
        for dst in sorted(live[src]):
            if dst == folder:
                problems.append(f"layer violation: {name(src)} imports an item {name(folder)} "
                                f"defines itself, above every row ({where(src, dst)})")
                continue
            if len(dst) <= d or dst[:d] != folder or dst[d] == src[d]:
                continue
            a, b = row_of.get(src[d]), row_of.get(dst[d])
            if a is not None and b is not None and b < a:
                problems.append(f"layer violation: {name(src)} (row {a + 1}) imports {name(dst)} "
                                f"(row {b + 1}) ({where(src, dst)})")
    return problems


# ---------------------------------------------------------------------------------------------
# Crates.


def workspace_members():
    with open(os.path.join(ROOT, "Cargo.toml"), "rb") as f:
        return tomllib.load(f)["workspace"]["members"]


def crate_targets(crate_dir):
    """(root file, requires a Layers section) for each target of the crate."""
    src = os.path.join(crate_dir, "src")
    lib, main = os.path.join(src, "lib.rs"), os.path.join(src, "main.rs")
    out = []
    if os.path.isfile(lib):
        out.append((lib, True))
    if os.path.isfile(main):
        out.append((main, not os.path.isfile(lib)))
    bindir = os.path.join(src, "bin")
    if os.path.isdir(bindir):
        for n in sorted(os.listdir(bindir)):
            p = os.path.join(bindir, n)
            if n.endswith(".rs"):
                out.append((p, False))
            elif os.path.isfile(os.path.join(p, "main.rs")):
                out.append((os.path.join(p, "main.rs"), False))
    return out


def check_crate(crate_dir, show_edges=False):
    problems = []
    targets = crate_targets(crate_dir)
    if not targets:
        return [f"no src/lib.rs or src/main.rs in {os.path.relpath(crate_dir, ROOT)}"]
    for root_file, require in targets:
        problems += check_target(root_file, crate_dir, require, show_edges)
    return problems


def main(argv):
    if "--self-test" in argv:
        import unittest
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        suite = unittest.defaultTestLoader.loadTestsFromName("import_layers_tests")
        result = unittest.TextTestRunner(verbosity=1).run(suite)
        return 0 if result.wasSuccessful() else 1
    crates, show_edges, args = [], "--edges" in argv, list(argv)
    while "--crate" in args:
        i = args.index("--crate")
        crates.append(os.path.abspath(args[i + 1]))
        del args[i:i + 2]
    if not crates:
        crates = [os.path.join(ROOT, m) for m in workspace_members()]
    failed = 0
    for c in crates:
        label = os.path.relpath(c, ROOT)
        if show_edges:
            print(f"{label}:")
        problems = check_crate(c, show_edges)
        if problems:
            failed += 1
            print(f"{label}: FAILED")
            for p in problems:
                print("  " + p.replace("\n", "\n  "))
        else:
            print(f"{label}: OK")
    if failed:
        print(f"{failed} of {len(crates)} crate(s) break their import layers")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
