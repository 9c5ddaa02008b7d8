#!/usr/bin/env python3
"""Fails if any crate of the workspace has an import cycle between its source files.

Each `src/` file is a node. A path that names an item of this crate (`use crate::a::b::X`,
`super::x::Y`, `self::z`, or such a path written inline in code) is an edge from the file that
writes it to the file that defines the item. Paths through re-exports (`pub use`) are followed to
the defining file, so a parent `mod.rs` that re-exports its children is not counted as depending
on them, and a child that uses such a re-export depends on the sibling that defines the item.
Declaring a child module (`mod x;`) is containment, not an edge. Test modules (`#[cfg(test)]`
to the end of a file) are ignored.

Usage: .ci/module-cycles.py [CRATE_DIR ...]   (default: every crate with a src/lib.rs)
"""

import re
import sys
from pathlib import Path

USE_RE = re.compile(r"\b(?:pub(?:\([a-z]+\))?\s+)?use\s+([^;]+);", re.S)
INLINE_RE = re.compile(r"\b((?:crate|super|self)(?:::[A-Za-z_][A-Za-z0-9_]*)+)")
MOD_RE = re.compile(r"^\s*(?:pub(?:\([a-z]+\))?\s+)?mod\s+([a-z_][a-z0-9_]*)\s*;", re.M)


def module_files(src: Path):
    """Module path (tuple) -> file, for every module file under src/."""
    mods = {}
    for f in src.rglob("*.rs"):
        rel = f.relative_to(src).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] in ("lib", "main") and len(parts) == 1:
            parts = []
        elif parts[-1] == "mod":
            parts = parts[:-1]
        mods[tuple(parts)] = f
    return mods


def code_of(f: Path) -> str:
    text = f.read_text()
    cut = text.find("#[cfg(test)]")
    if cut >= 0:
        text = text[:cut]
    # Drop comments and string literals so doc text cannot create edges.
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    return text


def expand_use(tree: str):
    """`a::{b, c::{d, e}}` -> [['a','b'], ['a','c','d'], ['a','c','e']] (glob `*` kept)."""
    tree = re.sub(r"\s+", " ", tree).strip()
    tree = re.sub(r"\s*(::|\{|\}|,)\s*", r"\1", tree)

    def split_top(s):
        depth, start, out = 0, 0, []
        for i, ch in enumerate(s):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == "," and depth == 0:
                out.append(s[start:i])
                start = i + 1
        out.append(s[start:])
        return [x for x in out if x]

    def go(prefix, s):
        if "{" in s and s.endswith("}"):
            head, inner = s.split("{", 1)
            head = [p for p in head.split("::") if p]
            for part in split_top(inner[:-1]):
                yield from go(prefix + head, part)
        else:
            name = s.split(" as ")[0]
            yield prefix + [p for p in name.split("::") if p]

    return list(go([], tree))


def main():
    crates = [Path(a) for a in sys.argv[1:]] or sorted(
        p.parent.parent for p in Path(".").glob("*/src/lib.rs")
    )
    failed = False
    for crate in crates:
        src = crate / "src"
        mods = module_files(src)
        code = {m: code_of(f) for m, f in mods.items()}
        # Re-exports: (module, name) -> absolute path it points to.
        reexports = {}
        for m, text in code.items():
            for tree in re.findall(r"\bpub(?:\([a-z]+\))?\s+use\s+([^;]+);", text, re.S):
                for path in expand_use(tree):
                    if path and path[-1] != "*":
                        reexports[(m, path[-1])] = path

        def absolute(m, path):
            """The path as an absolute module path (list), or None if outside this crate."""
            if not path:
                return None
            if path[0] == "crate":
                return list(path[1:])
            base = list(m)
            rest = list(path)
            # A file's `super` is its parent module; `self` is the module itself.
            while rest and rest[0] in ("super", "self"):
                if rest[0] == "super":
                    base = base[:-1]
                rest = rest[1:]
            if path[0] in ("super", "self"):
                return base + rest
            # A relative path starting with a child module or an item of this module.
            if tuple(base + [rest[0]]) in mods:
                return base + rest
            return None

        def resolve(abs_path, seen=None):
            """The file module that defines the item at abs_path."""
            seen = seen or set()
            # Longest prefix that is a module.
            for k in range(len(abs_path), -1, -1):
                mod = tuple(abs_path[:k])
                if mod in mods:
                    rest = abs_path[k:]
                    if rest and rest[0] != "*" and (mod, rest[0]) in reexports and (mod, rest[0]) not in seen:
                        seen.add((mod, rest[0]))
                        target = absolute(mod, reexports[(mod, rest[0])])
                        if target is not None:
                            return resolve(target + rest[1:], seen)
                    return mod
            return None

        edges = {}
        # Edges from what each file uses; its `pub use` and `mod` lines are containment.
        for m, text in code.items():
            plain = re.sub(r"\bpub(?:\([a-z]+\))?\s+use\s+[^;]+;", "", text)
            plain = re.sub(r"^\s*(?:pub(?:\([a-z]+\))?\s+)?mod\s+[a-z_0-9]+\s*;", "", plain, flags=re.M)
            keep = set()
            children = set(MOD_RE.findall(text))
            paths = [p for t in USE_RE.findall(plain) for p in expand_use(t)]
            paths += [p.split("::") for p in INLINE_RE.findall(plain)]
            for path in paths:
                if path and path[0] not in ("crate", "super", "self") and path[0] not in children:
                    continue
                a = absolute(m, path)
                if a is None:
                    continue
                target = resolve(a)
                if target is not None and target != m:
                    keep.add(target)
            edges[m] = keep

        # Tarjan's strongly connected components.
        index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]

        def strong(v):
            index[v] = low[v] = counter[0]
            counter[0] += 1
            stack.append(v)
            on.add(v)
            for w in edges[v]:
                if w not in index:
                    strong(w)
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
                    sccs.append(comp)

        sys.setrecursionlimit(10000)
        for v in mods:
            if v not in index:
                strong(v)
        n_edges = sum(len(e) for e in edges.values())
        name = lambda m: str(mods[m].relative_to(crate))
        if sccs:
            failed = True
            for comp in sccs:
                print(f"{crate}: import cycle among {', '.join(sorted(name(m) for m in comp))}")
                for m in sorted(comp):
                    inside = sorted(name(t) for t in edges[m] if t in comp)
                    print(f"    {name(m)} -> {', '.join(inside)}")
        else:
            print(f"{crate}: {len(mods)} files, {n_edges} edges, no import cycle")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
