#!/usr/bin/env python3
"""Lists the edges between the top modules of each crate (a file or folder under src/) and fails on a
cycle: no module may import a module that imports it back, however long the way round. An edge is any path
that starts at `crate::`, `super::` or `self::` and resolves, from the file it is written in, to another
top module: grouped imports (`use super::{a, b::c}`, over several lines too), `super::super::`, and a
folder's `mod.rs` (whose `super::` is the crate root) all count, and so does a name the crate root
re-exports from a top module (`crate::BertConfig` is an import of `config` when lib.rs says `pub use
config::BertConfig`). Inside an inline `mod tests { … }`, `super::` is the file's own module. Comments,
string and char literals and doc links do not count (a doc link is not an import). Also holds the command line to its size, the thin-binary rule
(issue 35): at most CLI_LINES lines in all, no file above FILE_LINES, counted as `wc -l` counts (every line
of every .rs file under crates/cli/src). Part of `make test`: `scripts/module-edges.py`; with
`--crate NAME=DIR` arguments it checks those source folders instead (the test of a known circle,
tests/architecture.rs, does)."""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CRATES = {"transformer-anatomy": ROOT / "src", "anatomy-course": ROOT / "crates/course/src",
          "anatomy-intake": ROOT / "crates/intake/src", "anatomy-checks": ROOT / "crates/checks/src",
          "anatomy-tools": ROOT / "crates/tools/src", "anatomy-notebooks": ROOT / "crates/notebooks/src",
          "anatomy-grade": ROOT / "crates/grade/src", "anatomy-report": ROOT / "crates/report/src",
          "anatomy-gradebook": ROOT / "crates/gradebook/src", "anatomy-class": ROOT / "crates/class/src",
          "anatomy-platforms": ROOT / "crates/platforms/src",
          "anatomy-cli": ROOT / "crates/cli/src"}
CLI_LINES, FILE_LINES = 2300, 350
FN_LINES = 80
STAGES = ["anatomy-intake", "anatomy-grade", "anatomy-checks", "anatomy-report", "anatomy-gradebook",
          "anatomy-class", "anatomy-platforms"]
FN = re.compile(r"\bfn\s+(r#)?([A-Za-z_][A-Za-z0-9_]*)")
# Comments, strings (raw ones too) and char literals, removed before paths are read. A lifetime ('a) is
# not a char literal: a char literal closes within one character or one escape.
NOISE = re.compile(r"""//[^\n]*|/\*.*?\*/|r(#*)".*?"\1|b?"(?:\\.|[^"\\])*"|b?'(?:\\u\{[0-9a-fA-F]{1,6}\}|\\x[0-9a-fA-F]{2}|\\.|[^'\\])'""", re.S)
INLINE_MOD = re.compile(r"\bmod\s+(r#)?([A-Za-z_][A-Za-z0-9_]*)\s*\{")
REEXPORT = re.compile(r"\bpub\s+use\s+(?:crate\s*::\s*|self\s*::\s*)?")
SUPER = re.compile(r"\s*super\s*::")
START = re.compile(r"\b(crate|super|self)\s*::")
IDENT = re.compile(r"(r#)?([A-Za-z_][A-Za-z0-9_]*)")
AS = re.compile(r"as\s+[A-Za-z_][A-Za-z0-9_]*")


def module_path(src: pathlib.Path, file: pathlib.Path) -> list:
    parts = list(file.relative_to(src).parts)
    parts[-1] = parts[-1][:-3]
    if parts[-1] in ("mod", "lib", "main"):
        parts.pop()
    return parts


def skip_space(code: str, at: int) -> int:
    while at < len(code) and code[at].isspace():
        at += 1
    return at


def read_tree(code: str, at: int):
    """The paths of a use tree that starts at `at` (just after a `::`), as lists of segments, and where the
    tree ends: `a::b`, `{a, b::{c, d}}`, `*` and `a as b` are read; anything else ends the path there."""
    at = skip_space(code, at)
    if code.startswith("{", at):
        paths, at = [], at + 1
        while True:
            at = skip_space(code, at)
            if at >= len(code) or code.startswith("}", at):
                return paths or [[]], at + 1
            inner, after = read_tree(code, at)
            paths += inner
            at = skip_space(code, after)
            if (alias := AS.match(code, at)):
                at = skip_space(code, alias.end())
            if code.startswith(",", at):
                at += 1
            elif not code.startswith("}", at):
                return paths or [[]], at
    m = IDENT.match(code, at)
    if not m:
        return [[]], at
    after = skip_space(code, m.end())
    if code.startswith("::", after):
        inner, end = read_tree(code, after + 2)
        return [[m.group(2)] + p for p in inner], end
    return [[m.group(2)]], m.end()


def inline_modules(code: str) -> list:
    """Each inline module (`mod name { … }`) of a file: its name and the span of its braces."""
    spans = []
    for m in INLINE_MOD.finditer(code):
        depth, at = 0, m.end() - 1
        while at < len(code):
            depth += {"{": 1, "}": -1}.get(code[at], 0)
            if depth == 0:
                break
            at += 1
        spans.append((m.group(2), m.end() - 1, at))
    return spans


def reexports(src: pathlib.Path, tops: set) -> dict:
    """The names the crate root re-exports from its own top modules (`pub use config::{BertConfig, …};`),
    each with the module it comes from: `crate::BertConfig` is an import of `config`."""
    names = {}
    for root in ("lib.rs", "main.rs"):
        if not (src / root).exists():
            continue
        code = NOISE.sub(lambda m: " " * len(m.group(0)), (src / root).read_text())
        for m in REEXPORT.finditer(code):
            for path in read_tree(code, m.end())[0]:
                if len(path) >= 2 and path[0] in tops and path[-1] not in ("*", "self"):
                    names.setdefault(path[-1], path[0])
    return names


def edges(src: pathlib.Path) -> dict:
    graph: dict = {}
    tops = {p.stem if p.suffix == ".rs" else p.name for p in src.iterdir()} - {"lib", "main"}
    exported = reexports(src, tops)
    for file in sorted(src.rglob("*.rs")):
        here = module_path(src, file)
        if not here:
            continue
        code = NOISE.sub(lambda m: " " * len(m.group(0)), file.read_text())
        inline = inline_modules(code)
        for start in START.finditer(code):
            # A path written inside another (`a::crate::b` cannot be; `x.super::` neither): only a path's
            # first segment starts one.
            before = code[:start.start()].rstrip()
            if before.endswith("::"):
                continue
            # Inside `mod tests { … }`, `super::` is the file's module, not its parent.
            inside = [name for name, begin, end in inline if begin < start.start() < end]
            base = [] if start.group(1) == "crate" else list(here) + inside
            at = start.end()
            if start.group(1) == "super":
                base = base[:-1]
            while (more := SUPER.match(code, at)):
                base, at = base[:-1], more.end()
            for path in read_tree(code, at)[0]:
                full = [s for s in base + path if s != "self"]
                if full and full[0] not in tops and full[0] in exported:
                    full = [exported[full[0]]] + full
                if full and full[0] in tops and full[0] != here[0]:
                    graph.setdefault(here[0], set()).add(full[0])
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


def functions(path: pathlib.Path):
    """Each function with a body in a file, as (name, first line, lines from `fn` to its closing brace).
    Comments, strings and char literals are blanked first (their newlines kept), so that a brace in them
    does not count; a nested function is measured on its own and within its outer one."""
    code = NOISE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), path.read_text())
    for m in FN.finditer(code):
        at = m.end()
        while at < len(code) and code[at] not in "{;":
            at += 1
        if at >= len(code) or code[at] == ";":
            continue  # a declaration in a trait, or `fn` in a type
        depth = 0
        for at in range(at, len(code)):
            depth += {"{": 1, "}": -1}.get(code[at], 0)
            if depth == 0:
                break
        first = code.count("\n", 0, m.start()) + 1
        yield m.group(2), first, code.count("\n", 0, at) + 2 - first


def long_functions(src: pathlib.Path) -> list:
    return [f"{f.relative_to(src)}:{line} {name} ({n} lines)" for f in sorted(src.rglob("*.rs"))
            for name, line, n in functions(f) if n > FN_LINES]


def main(args: list) -> int:
    if len(args) == 3 and args[1] == "--long-functions":
        found = long_functions(pathlib.Path(args[2]))
        print("; ".join(found) if found else f"no function above {FN_LINES} lines")
        return 1 if found else 0
    crates = dict(a.split("=", 1) for a in args[1:] if a != "--crate") if len(args) > 1 else CRATES
    failed = False
    for crate, src in crates.items():
        graph = edges(pathlib.Path(src))
        found = cycle(graph)
        count = sum(len(v) for v in graph.values())
        if found:
            print(f"{crate}: a cycle of imports: {' → '.join(found)}")
            failed = True
        else:
            print(f"{crate}: {count} edges between its top modules, no cycle")
    if len(args) > 1:
        return 1 if failed else 0
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
    for crate in STAGES:
        found = long_functions(CRATES[crate])
        print(f"{crate}: " + (f"functions above {FN_LINES} lines: " + "; ".join(found) + ": split them by concern"
                              if found else f"no function above {FN_LINES} lines"))
        failed |= bool(found)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
