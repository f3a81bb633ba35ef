"""Executes every notebook in a folder, in order, with the Rust (evcxr) kernel, and checks them.

Run by scripts/notebooks.sh (inside its virtualenv). A notebook fails when a cell errors or panics, when
anything is written to stderr that looks like an error, or when a check that its chapter declares in an
HTML comment does not hold:

    <!-- check: contains TEXT -->         TEXT appears in the outputs
    <!-- check: snapshot NAME -->          every line of snapshots/NAME.snap appears in the outputs, so the
                                           shapes a notebook prints are the ones the tests snapshot
    <!-- check: mime TYPE[|TYPE...] -->    some output is rich content of that MIME type
    <!-- check: solved NAME -->            a homework's check cell says NAME passes when the notebook holds
                                           its solution, and "not done" in the released copy (todo!())

Prints each notebook's time and its cells' times, and a closing line "N passed, M failed". Every executed
notebook, outputs included, is written to target/executed-notebooks/ for `make book`. The run starts by
warming the build every kernel copies (below); with no notebook named, it ends by running notebooks 01
and 03 side by side, two kernels started at the same moment.

With --warm, runs only the first notebook's set-up cell (and the `:dep` lines of later notebooks): `make
notebooks` does that before it starts JupyterLab, so that the kernel's build (tch, this crate and the
homework's exercises crate) is done when a learner opens a notebook.
"""
import fcntl
import glob
import os
import re
import sys
import time

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError


def output_text(cell):
    parts = []
    for out in cell.get("outputs", []):
        if out.output_type == "stream":
            parts.append(out.text)
        elif out.output_type in ("execute_result", "display_data"):
            parts.extend(str(v) for k, v in out.data.items() if k.startswith("text/"))
        elif out.output_type == "error":
            parts.append("\n".join(out.traceback))
    return "".join(parts)


def snapshot_lines(root, name):
    text = open(os.path.join(root, "snapshots", f"{name}.snap")).read()
    body = text.split("---\n", 2)[2]  # after insta's header
    return [line for line in body.splitlines() if line.strip()]


def check(path, root, keep=True):
    nb = nbformat.read(path, as_version=4)
    starts, timings = {}, []
    client = NotebookClient(
        nb,
        timeout=1800,
        kernel_name="rust",
        resources={"metadata": {"path": os.path.dirname(path)}},
        on_cell_start=lambda cell, cell_index: starts.__setitem__(cell_index, time.perf_counter()),
        on_cell_executed=lambda cell, cell_index, execute_reply: timings.append(time.perf_counter() - starts[cell_index]),
    )
    began = time.perf_counter()
    problems = []
    try:
        client.execute()
    except CellExecutionError as error:
        problems.append("a cell failed: " + "\n".join(str(error).splitlines()[-12:]))
    elapsed = time.perf_counter() - began
    code = [c for c in nb.cells if c.cell_type == "code"]
    text = "".join(output_text(c) for c in code)
    mimes = {k for c in code for o in c.get("outputs", []) if o.output_type in ("execute_result", "display_data") for k in o.data}
    for c in code:
        for o in c.get("outputs", []):
            if o.output_type == "error":
                problems.append(f"error output: {o.ename}: {o.evalue}")
            elif o.output_type == "stream" and o.name == "stderr" and re.search(r"error|panicked", o.text, re.I):
                problems.append("stderr: " + o.text.strip()[:500])
            elif o.output_type == "execute_result" and "".join(o.data.get("text/plain", "")).startswith("Html("):
                problems.append("a picture was shown as its Debug text, not rendered (evcxr fell back to Debug)")
            elif o.output_type == "execute_result" and "".join(o.data.get("text/plain", "")).strip() == "()":
                problems.append("a cell shows a stray `()`: end it with a statement (`;`) or a value worth showing")
    if not problems:
        markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        for kind, arg in re.findall(r"<!-- check: (\w+) (.*?) -->", markdown):
            if kind == "contains" and arg not in text:
                problems.append(f"the outputs do not contain {arg!r}")
            elif kind == "snapshot":
                missing = [line for line in snapshot_lines(root, arg) if line not in text]
                if missing:
                    problems.append(f"shapes differ from snapshots/{arg}.snap: missing {missing}")
            elif kind == "solved":
                solved = any("BEGIN SOLUTION" in c.source for c in code)
                wanted = f"✓ {arg} passes its check" if solved else f"· {arg} is not done yet"
                if wanted not in text:
                    problems.append(f"the check cell does not say {wanted!r}")
            elif kind == "mime" and not mimes & set(arg.split("|")):
                problems.append(f"no {arg} output (got {sorted(mimes)})")
    # The executed notebook is kept for `make book` (target/executed-notebooks/), even when it failed.
    if keep:
        executed = os.path.join(root, "target", "executed-notebooks")
        os.makedirs(executed, exist_ok=True)
        nbformat.write(nb, os.path.join(executed, os.path.basename(path)))
    cells = ", ".join(f"{t:.1f}" for t in timings)
    print(f"[notebooks] {os.path.basename(path)}: {elapsed:.0f} s (cells: {cells})", flush=True)
    return problems


def warm(folder):
    """Builds tch and this crate in .deps/evcxr-tmp, the folder every kernel copies (scripts/kernel.py)."""
    notebooks = sorted(glob.glob(os.path.join(folder, "*.ipynb")))
    nb = nbformat.read(notebooks[0], as_version=4)
    nb.cells = [c for c in nb.cells if c.cell_type == "code"][:1]
    # Crates a later notebook adds with a `:dep` of its own (the homework's exercises crate) are built
    # into the warm folder too, so that its kernel does not compile them again.
    first = set(nb.cells[0].source.splitlines())
    more = sorted({line for path in notebooks[1:] for c in nbformat.read(path, as_version=4).cells
                   if c.cell_type == "code" for line in c.source.splitlines()
                   if line.startswith(":dep ") and line not in first})
    if more:
        nb.cells.append(nbformat.v4.new_code_cell("\n".join(more)))
    print("[notebooks] warming the kernel: building tch, this crate and the exercises' crate once (about "
          "2 minutes the first time on 2 cores, with cargo's lines below; seconds after that) ...", flush=True)
    began = time.perf_counter()
    warm_dir = os.path.join(os.path.dirname(folder), ".deps", "evcxr-tmp")
    os.makedirs(warm_dir, exist_ok=True)
    with open(warm_dir + ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # kernels starting now wait to copy until the build is whole
        marker = os.path.join(warm_dir, ".anatomy-warmed")
        if os.path.exists(marker):
            os.remove(marker)
        os.environ["ANATOMY_KERNEL_WARMS"] = "1"
        try:
            NotebookClient(nb, timeout=1800, kernel_name="rust", resources={"metadata": {"path": folder}}).execute()
        finally:
            del os.environ["ANATOMY_KERNEL_WARMS"]
        open(marker, "w").close()
    print(f"[notebooks] {output_text(nb.cells[0]).strip()} (warmed in {time.perf_counter() - began:.0f} s)", flush=True)


def side_by_side(paths, root):
    """Two kernels started at the same moment, each running its notebook to the end, as a learner with
    two notebooks open does: each kernel must build in its own folder, or they break each other."""
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(len(paths)) as pool:
        began = time.perf_counter()
        results = pool.starmap(check, [(p, root, False) for p in paths])
    names = " and ".join(os.path.basename(p) for p in paths)
    print(f"[notebooks] side by side, started together: {names} in {time.perf_counter() - began:.0f} s", flush=True)
    return [f"side by side: {problem}" for problems in results for problem in problems]


def main():
    if sys.argv[1] == "--warm":
        warm(os.path.abspath(sys.argv[2]))
        return
    folder = os.path.abspath(sys.argv[1])
    root = os.path.dirname(folder)
    notebooks = sorted(glob.glob(os.path.join(folder, "*.ipynb")))
    every = len(sys.argv) == 2
    if not every:  # only the notebooks whose names start with these prefixes, e.g. "10"
        notebooks = [n for n in notebooks if any(os.path.basename(n).startswith(p) for p in sys.argv[2:])]
    warm(folder)
    failed, failures = 0, []
    began = time.perf_counter()
    for path in notebooks:
        problems = check(path, root)
        for p in problems:
            print(f"[notebooks] FAILED {os.path.basename(path)}: {p}", flush=True)
            failures.append(f"{os.path.basename(path)}: {p}")
        failed += bool(problems)
    passed = len(notebooks) - failed
    if every:
        pair = [n for n in notebooks if os.path.basename(n)[:2] in ("01", "03")]
        problems = side_by_side(pair, root)
        for p in problems:
            print(f"[notebooks] FAILED {p}", flush=True)
            failures.append(p)
        failed += bool(problems)
    print(f"[notebooks] all notebooks: {time.perf_counter() - began:.0f} s")
    # Again at the very end, where a log cut to its last lines (CI's) still shows which notebook and why.
    for p in failures:
        print(f"[notebooks] FAILED {p[:1500]}", flush=True)
    print(f"notebooks: {passed} passed, {failed} failed" + (" (and two side by side)" if every and not problems else ""))
    sys.exit(1 if failed or not notebooks else 0)


if __name__ == "__main__":
    main()
