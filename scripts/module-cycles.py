#!/usr/bin/env python3
"""Finds dependency cycles between the modules of one crate.

An edge A -> B is a path into module B (`crate::b::...`, `super::...`, or
a child module named from its parent) in A's code outside `#[cfg(test)]`
items; comments and doc links do not count. A path to a name that a
module re-exports from a child (`pub use child::name`) is an edge to that
child. The check runs twice: between files, and between the crate's
top-level modules (a folder such as `transforms/` is one node there), so
neither a cycle of files nor one that goes through a folder comes back
unnoticed.

Usage: module-cycles.py SRC_DIR    (exits 1 and prints each cycle found)
"""

import re
import sys
from pathlib import Path


def strip_comments(text):
    """The text without comments and string contents (lines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    if text[i] == "\n":
                        out.append("\n")
                    i += 1
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and not re.match(r"\w", text[i - 1] if i else " "):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            end = n if end < 0 else end + 1 + len(hashes)
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4]):
            # A char literal (lifetimes have no closing quote).
            end = text.index("'", i + 2) + 1
            out.append("' '")
            i = end
        else:
            out.append(c)
            i += 1
    return "".join(out)


def strip_test_items(text):
    """The text without items marked `#[cfg(test)]`."""
    out, i = [], 0
    marker = re.compile(r"#\[cfg\(test\)\]")
    while True:
        m = marker.search(text, i)
        if not m:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:m.start()])
        j = m.end()
        # The item ends at `;` before any brace, or at its matching `}`.
        depth = 0
        while j < len(text):
            if text[j] == ";" and depth == 0:
                j += 1
                break
            if text[j] == "{":
                depth += 1
            elif text[j] == "}":
                depth -= 1
                if depth == 0:
                    j += 1
                    break
            j += 1
        i = j


class Crate:
    def __init__(self, src):
        self.src = Path(src)
        self.files = {}  # module path (tuple) -> cleaned text
        self.load(("crate",), self.src / "lib.rs")

    def load(self, path, file):
        text = strip_test_items(strip_comments(file.read_text()))
        self.files[path] = text
        for name in re.findall(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", text, re.M):
            folder = file.parent if file.name in ("lib.rs", "mod.rs") else file.parent / file.stem
            child = folder / f"{name}.rs"
            if not child.exists():
                child = folder / name / "mod.rs"
            self.load(path + (name,), child)

    def children(self, module):
        return {p[-1] for p in self.files if len(p) == len(module) + 1 and p[:-1] == module}

    def reexports(self, module):
        """Names `module` re-exports from a child, mapped to that child."""
        found = {}
        text = self.files[module]
        for m in re.finditer(r"\bpub(?:\([^)]*\))?\s+use\s+(?:self::)?(\w+)::(\{[^}]*\}|\w+)", text):
            child, names = m.group(1), m.group(2)
            if child in self.children(module):
                for name in re.findall(r"\w+", names):
                    found[name] = module + (child,)
        return found

    def resolve(self, segments):
        """The module a path's segments lead into, through re-exports."""
        module = ("crate",)
        for segment in segments:
            if module + (segment,) in self.files:
                module = module + (segment,)
                continue
            target = self.reexports(module).get(segment)
            return target if target else module
        return module

    def edges(self):
        edges = {}
        for module, text in self.files.items():
            found = set()
            children = self.children(module)
            for m in re.finditer(r"(?<![\w:])((?:crate|super|self|\w+)(?:::\w+|::\{[^;]*?\})+)", text):
                path = m.group(1)
                head, *rest = path.split("::", 1)
                tails = [rest[0]] if rest else []
                if tails and tails[0].startswith("{"):
                    tails = [t.strip() for t in re.split(r",", tails[0].strip("{}")) if t.strip()]
                if head == "crate":
                    base = ("crate",)
                elif head == "super":
                    base = module[:-1]
                elif head == "self":
                    base = module
                elif head in children:
                    base = module + (head,)
                else:
                    continue
                expanded = []
                for tail in tails or [""]:
                    lead, brace, group = tail.partition("{")
                    lead = [s for s in re.findall(r"\w+", lead) if s != "self"]
                    items = re.findall(r"\w+", group.split("}")[0]) if brace else [None]
                    expanded += [lead + ([item] if item else []) for item in items]
                for segments in expanded:
                    target = self.resolve(list(base[1:]) + segments)
                    if target != module and target != ("crate",):
                        found.add(target)
            edges[module] = found
        return edges


def cycles(edges):
    """Every strongly connected component with more than one node."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in list(edges):
        if v not in index:
            visit(v)
    return out


def name(module):
    return "::".join(module[1:]) or "crate"


def main():
    crate = Crate(sys.argv[1])
    files = crate.edges()
    top = {}
    for module, targets in files.items():
        if len(module) < 2:
            continue
        node = module[:2]
        for target in targets:
            if len(target) >= 2 and target[:2] != node:
                top.setdefault(node, set()).add(target[:2])
    found = [("files", c) for c in cycles(files)] + [("top-level modules", c) for c in cycles(top)]
    for level, component in found:
        print(f"error: module cycle among {level} in {sys.argv[1]}: " + ", ".join(map(name, component)))
        for module in component:
            inside = sorted(name(t) for t in (files if level == "files" else top).get(module, ()) if t in component)
            print(f"  {name(module)} -> {', '.join(inside)}")
    if not found:
        print(f"no module cycles in {sys.argv[1]} ({len(files)} modules)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
