#!/usr/bin/env python3
"""Lists the `crate::` edges between the top modules of each crate (a file or folder under src/) and fails on
a cycle: no module may import a module that imports it back, however long the way round. Doc comments and
ordinary comments do not count (a doc link is not an import). Also holds the command line to its size,
the thin-binary rule (issue 35): at most CLI_LINES lines in all, no file above FILE_LINES, counted as
`wc -l` counts (every line of every .rs file under crates/cli/src). Part of `make test`:
`scripts/module-edges.py`."""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CRATES = {"transformer-anatomy": ROOT / "src", "anatomy-intake": ROOT / "crates/intake/src",
          "anatomy-exercises": ROOT / "crates/exercises/src",
          "anatomy-cli": ROOT / "crates/cli/src"}
CLI_LINES, FILE_LINES = 2000, 350
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
cli_src = ROOT / "crates/cli/src"
cli = [(len(f.read_text().splitlines()), str(f.relative_to(cli_src))) for f in cli_src.rglob("*.rs")]
total = sum(n for n, _ in cli)
above = [f"{name} ({n})" for n, name in sorted(cli, reverse=True) if n > FILE_LINES]
print(f"anatomy-cli: {total} lines in {len(cli)} files (at most {CLI_LINES}); files above {FILE_LINES}: "
      + (", ".join(above) or "none"))
if total > CLI_LINES or above:
    print("anatomy-cli: the command line only parses and prints: move the work into a library "
          "(see ARCHITECTURE.md)")
    failed = True
sys.exit(1 if failed else 0)
