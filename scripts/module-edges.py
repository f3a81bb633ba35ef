#!/usr/bin/env python3
"""Lists the `crate::` edges between the top modules of each crate (a file or folder under src/) and fails on
a cycle: no module may import a module that imports it back, however long the way round. Doc comments and
ordinary comments do not count (a doc link is not an import). Also prints the command line's size, the
number the thin-binary rule watches. Part of `make test`: `scripts/module-edges.py`."""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CRATES = {"transformer-anatomy": ROOT / "src", "anatomy-exercises": ROOT / "crates/exercises/src",
          "anatomy-cli": ROOT / "crates/cli/src"}
EDGE = re.compile(r"\bcrate::([a-z_][a-z0-9_]*)")
SUPER = re.compile(r"\bsuper::([a-z_][a-z0-9_]*)")


def top_module(src: pathlib.Path, file: pathlib.Path) -> str:
    part = file.relative_to(src).parts[0]
    return part[:-3] if part.endswith(".rs") else part


def edges(src: pathlib.Path) -> dict:
    graph: dict = {}
    for file in sorted(src.rglob("*.rs")):
        module = top_module(src, file)
        if module in ("lib", "main"):
            continue
        nested = len(file.relative_to(src).parts) > 1
        for line in file.read_text().splitlines():
            code = line.split("//", 1)[0]
            found = set(EDGE.findall(code))
            # A top-level file's `super::x` is the crate root's x; inside a folder, super:: stays inside.
            if not nested:
                found |= set(SUPER.findall(code))
            for target in found - {module}:
                if (src / f"{target}.rs").exists() or (src / target).is_dir():
                    graph.setdefault(module, set()).add(target)
    return graph


def cycle(graph: dict):
    state: dict = {}

    def visit(node, path):
        state[node] = "open"
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return path + [node, nxt]
            if nxt not in state:
                found = visit(nxt, path + [node])
                if found:
                    return found
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node, [])
            if found:
                return found[found.index(found[-1]):]
    return None


failed = False
for crate, src in CRATES.items():
    graph = edges(src)
    found = cycle(graph)
    count = sum(len(v) for v in graph.values())
    if found:
        print(f"{crate}: a cycle of imports: {' → '.join(found)}")
        failed = True
    else:
        print(f"{crate}: {count} edges between its top modules, no cycle")
cli = [(len(f.read_text().splitlines()), f.name) for f in (ROOT / "crates/cli/src").glob("*.rs")]
print(f"anatomy-cli: {sum(n for n, _ in cli)} lines; files above 350: "
      + (", ".join(f"{name} ({n})" for n, name in sorted(cli, reverse=True) if n > 350) or "none"))
sys.exit(1 if failed else 0)
