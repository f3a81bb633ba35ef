"""Executes every notebook in a folder, in order, with the Rust (evcxr) kernel, and checks them.

Run by scripts/notebooks.sh (inside its virtualenv). A notebook fails when a cell errors or panics, when
anything is written to stderr that looks like an error, or when a check that its chapter declares in an
HTML comment does not hold:

    <!-- check: contains TEXT -->         TEXT appears in the outputs
    <!-- check: snapshot NAME -->          every line of snapshots/NAME.snap appears in the outputs, so the
                                           shapes a notebook prints are the ones the tests snapshot
    <!-- check: mime TYPE[|TYPE...] -->    some output is rich content of that MIME type
    <!-- check: solved NAME -->            a homework's check cell says NAME is "not done" in the notebook,
                                           which shows the task (todo!()), and that NAME passes in the
                                           instructors' version, the reference solution put in from
                                           solutions/ (`anatomy notebooks release --source`), which is run
                                           beside it where solutions/ is, and not kept for the book

Every IOPub message is recorded with its parent (RecordingClient): a message for a cell that arrives
after that cell's "idle" status fails the notebook by name ("cell 2: 1 stream message arrived 180 ms
after idle"), since Jupyter (nbclient here, JupyterLab for a learner) stops reading a cell's output at
"idle" and drops whatever comes later; and a cell whose output is not complete within IOPUB_TIMEOUT of
its reply fails too (nbclient only logs a warning by default). `--self-test` holds one line back until
after its cell's "idle" and checks that the run fails by that name.

Prints each notebook's time and its cells' times, and a closing line "N passed, M failed". Every executed
notebook, outputs included, is written to target/executed-notebooks/ for `make book`. The run starts by
warming the build every kernel copies (below); the notebooks then run two kernels at a time, the first two
started at the same moment, as a learner with two notebooks open starts them.

With --warm, runs only the first notebook's set-up cell (and the `:dep` lines of later notebooks): `make
notebooks` does that before it starts JupyterLab, so that the kernel's build (tch, this crate and the
homework's checks crate) is done when a learner opens a notebook.
"""
import fcntl
import glob
import os
import re
import sys
import time

import asyncio
import queue

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionComplete, CellExecutionError
from nbclient.util import ensure_async, run_sync

# A kernel's five ports, as jupyter_client's KernelManager names them.
PORT_NAMES = ["shell_port", "iopub_port", "stdin_port", "hb_port", "control_port"]
# The scratch folders that hold the instructors' version of a homework notebook while it runs.
SOURCE = ".homework-source."
# Seconds a cell's output may take to be complete after the kernel's reply before the cell fails.
IOPUB_TIMEOUT = 60
# Seconds the last cell's late messages are waited for before the kernel is shut down.
DRAIN = 0.5
# A cell's output that arrives sooner than this after the kernel announced the cell (execute_input) came
# before the cell could have run: evcxr compiles every cell first, which takes longer. It is the previous
# cell's late output, sent under the new cell's name.
EARLY = 0.05


class RecordingClient(NotebookClient):
    """nbclient's client, recording every IOPub message with its parent: `late` lists what arrived for a
    cell after that cell's "idle" status, as (cell number, message type, milliseconds after idle, text),
    and `early` the output that arrived for a cell before it could have run (sooner than EARLY after its
    execute_input): a late line of the cell before, which the kernel sent under the next cell's name.

    nbclient reads IOPub only for the cell it runs and discards every other message unseen; this client
    looks at each one first. Pinned to nbclient 0.11.0, whose _async_poll_output_msg it replaces."""

    def __init__(self, *args, hold_back=None, **kwargs):
        super().__init__(*args, iopub_timeout=IOPUB_TIMEOUT, raise_on_iopub_timeout=True, **kwargs)
        self.late, self.early = [], []
        self.drained = False  # whether the last cell's late messages were waited for
        self.announced = {}  # a cell's request id -> when its execute_input arrived
        self.idle = {}  # a finished cell's request id -> (cell number, when its idle status arrived)
        self.numbers = {}  # a cell's request id -> its number among the code cells, from 1
        # For --self-test: the text of a stream message to deliver only after its cell's idle status.
        self.hold_back, self.held = hold_back, None

    def record(self, msg, number=None):
        parent = msg["parent_header"].get("msg_id")
        now = time.perf_counter()
        if msg["msg_type"] == "execute_input":
            self.announced[parent] = now
        elif msg["msg_type"] == "stream" and number is not None and parent not in self.idle:
            since = now - self.announced.get(parent, now + 1)
            if since < EARLY:
                self.early.append((number, since * 1000, msg["content"].get("text", "")))
        if parent in self.idle:
            number, idle = self.idle[parent]
            text = msg["content"].get("text", "") if msg["msg_type"] == "stream" else ""
            self.late.append((number, msg["msg_type"], (time.perf_counter() - idle) * 1000, text))

    async def _async_poll_output_msg(self, parent_msg_id, cell, cell_index):
        number = self.numbers.setdefault(parent_msg_id, len(self.numbers) + 1)
        while True:
            msg = await ensure_async(self.kc.iopub_channel.get_msg(timeout=None))
            if self.hold_back and msg["msg_type"] == "stream" and self.hold_back in msg["content"].get("text", ""):
                self.held, self.hold_back = msg, None
                continue
            mine = msg["parent_header"].get("msg_id") == parent_msg_id
            self.record(msg, number if mine else None)
            if not mine:
                continue
            try:
                self.process_message(msg, cell, cell_index)
            except CellExecutionComplete:
                self.idle[parent_msg_id] = (number, time.perf_counter())
                if self.held is not None:
                    self.record(self.held)
                    self.held = None
                return

    async def async_execute(self, **kwargs):
        # After the last cell, its late messages are read for DRAIN seconds before the kernel is shut down.
        last = max((i for i, c in enumerate(self.nb.cells) if c.cell_type == "code"), default=-1)
        timing = self.on_cell_executed

        async def executed(cell, cell_index, execute_reply):
            if timing:
                timing(cell=cell, cell_index=cell_index, execute_reply=execute_reply)
            deadline = time.perf_counter() + DRAIN
            self.drained = self.drained or cell_index == last
            while cell_index == last and (left := deadline - time.perf_counter()) > 0:
                try:
                    self.record(await ensure_async(self.kc.iopub_channel.get_msg(timeout=left)))
                except queue.Empty:
                    break

        self.on_cell_executed = executed
        return await super().async_execute(**kwargs)

    # nbclient binds `execute` to its own `async_execute` where it defines it: bind it to this one.
    execute = run_sync(async_execute)

    def late_problems(self):
        by_cell = {}
        for number, kind, ms, text in self.late:
            by_cell.setdefault(number, []).append((kind, ms, text))
        problems = []
        for number, messages in sorted(by_cell.items()):
            kinds = ", ".join(sorted({k for k, _, _ in messages}))
            first = min(ms for _, ms, _ in messages)
            texts = [t.strip() for _, _, t in messages if t.strip()]
            shown = f": {texts[0][:200]!r}" if texts else ""
            problems.append(f"cell {number}: {len(messages)} {kinds} message(s) arrived {first:.0f} ms after "
                            f"its idle status, which Jupyter drops{shown}")
        for number, ms, text in self.early:
            when = "before" if ms < 0 else f"{ms:.0f} ms after"
            problems.append(f"cell {number}: a line arrived {when} the kernel announced the cell, before it could have "
                            f"run (the cell before's late output, under this cell's name): {text.strip()[:200]!r}")
        return problems


def new_client(nb, folder, ports=None, **kwargs):
    """A RecordingClient for `nb` with the Rust kernel, started in `folder`; with `ports` (five, in
    PORT_NAMES' order) the kernel listens on those instead of ports jupyter_client picks itself."""
    client = RecordingClient(nb, timeout=1800, kernel_name="rust", resources={"metadata": {"path": folder}}, **kwargs)
    if ports:
        client.km = client.create_kernel_manager()
        client.km.cache_ports = False
        for name, port in zip(PORT_NAMES, ports):
            setattr(client.km, name, port)
    return client


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


def check(path, root, keep=True, ports=None, hold_back=None):
    nb = nbformat.read(path, as_version=4)
    starts, timings = {}, []
    client = new_client(
        nb,
        os.path.dirname(path),
        ports,
        on_cell_start=lambda cell, cell_index: starts.__setitem__(cell_index, time.perf_counter()),
        on_cell_executed=lambda cell, cell_index, execute_reply: timings.append(time.perf_counter() - starts[cell_index]),
        hold_back=hold_back,
    )
    began = time.perf_counter()
    problems = []
    try:
        client.execute()
    except CellExecutionError as error:
        problems.append("a cell failed: " + "\n".join(str(error).splitlines()[-12:]))
    problems.extend(client.late_problems())
    if not problems and not client.drained:
        problems.append("the last cell's late output was not waited for (the runner's drain did not run)")
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
    print(f"[notebooks] {shown(path)}: {elapsed:.0f} s (cells: {cells})", flush=True)
    return problems


def made_from(root, cells):
    """What the warm build is made from, as one string: the set-up cells, the compiler's version, the
    contents of the kernel's spec (the kernel program, LibTorch) and settings and of cargo's files, and the
    name, size and modification time of every file the crates it builds read (this crate, those under
    crates/, solutions/ and the exercises' hints). A build whose marker holds the same string is warm."""
    import hashlib
    import subprocess

    digest = hashlib.sha256("\n".join(cells).encode())
    digest.update(subprocess.run(["rustc", "-vV"], capture_output=True).stdout)
    deps = os.path.join(root, ".deps")
    for path in [os.path.join(deps, "jupyter", "kernels", "rust", "kernel.json"),
                 os.path.join(deps, "evcxr-config", "evcxr.toml"), os.path.join(root, ".cargo", "config.toml")]:
        digest.update(path.encode() + (open(path, "rb").read() if os.path.exists(path) else b"(none)"))
    listed = [os.path.join(root, name) for name in ["Cargo.toml", "Cargo.lock", "build.rs"]]
    for top in ["src", "crates", "solutions", os.path.join("exercises", "hints")]:
        for parent, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(d for d in dirs if d != "target")
            listed += [os.path.join(parent, name) for name in sorted(files)]
    for path in listed:
        info = os.stat(path) if os.path.exists(path) else None
        said = f"{info.st_size} {info.st_mtime_ns}" if info else "(none)"
        digest.update(f"{os.path.relpath(path, root)} {said}\n".encode())
    return digest.hexdigest()


def warm(folder):
    """Builds tch and this crate in .deps/evcxr-tmp, the folder every kernel copies (scripts/kernel.py).
    Skipped when that build is whole and nothing it is made from changed since (`make test` warms it for
    the first JupyterLab check; the second and the notebooks' run find it so). Should a change go unseen, a
    kernel still builds what its copy lacks: a skip can cost time, never give a wrong build."""
    notebooks = sorted(glob.glob(os.path.join(folder, "*.ipynb")))
    nb = nbformat.read(notebooks[0], as_version=4)
    nb.cells = [c for c in nb.cells if c.cell_type == "code"][:1]
    # Crates a later notebook adds with a `:dep` of its own (the homework's checks crate) are built
    # into the warm folder too, so that its kernel does not compile them again.
    first = set(nb.cells[0].source.splitlines())
    more = sorted({line for path in notebooks[1:] for c in nbformat.read(path, as_version=4).cells
                   if c.cell_type == "code" for line in c.source.splitlines()
                   if line.startswith(":dep ") and line not in first})
    if more:
        nb.cells.append(nbformat.v4.new_code_cell("\n".join(more)))
    warm_dir = os.path.join(os.path.dirname(folder), ".deps", "evcxr-tmp")
    marker = os.path.join(warm_dir, ".anatomy-warmed")
    stamp = made_from(os.path.dirname(folder), [c.source for c in nb.cells])
    began = time.perf_counter()
    os.makedirs(warm_dir, exist_ok=True)
    with open(warm_dir + ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # kernels starting now wait to copy until the build is whole
        try:
            with open(marker) as f:
                whole = f.read() == stamp and os.path.isdir(os.path.join(warm_dir, "target"))
        except FileNotFoundError:
            whole = False
        if whole:
            print("[notebooks] the kernel's build is warm: nothing it is made from changed since", flush=True)
            return
        print("[notebooks] warming the kernel: building tch, this crate and the checks' crate once (about "
              "2 minutes the first time on 2 cores, with cargo's lines below; seconds after that) ...", flush=True)
        if os.path.exists(marker):
            os.remove(marker)
        os.environ["ANATOMY_KERNEL_WARMS"] = "1"
        try:
            NotebookClient(nb, timeout=1800, kernel_name="rust", resources={"metadata": {"path": folder}}).execute()
        finally:
            del os.environ["ANATOMY_KERNEL_WARMS"]
        with open(marker, "w") as f:
            f.write(stamp)
    print(f"[notebooks] {output_text(nb.cells[0]).strip()} (warmed in {time.perf_counter() - began:.0f} s)", flush=True)


def shown(path):
    """A notebook's name as the run prints it; the instructors' version of a homework says so."""
    name = os.path.basename(path)
    return name + " (the instructors' version)" if os.path.basename(os.path.dirname(path)).startswith(SOURCE) else name


def instructors_versions(root, notebooks):
    """The instructors' version of each homework notebook among these (a chapter with a `solved` check),
    written by `anatomy notebooks release --source` into a scratch folder beside notebooks/ (as my-notebooks/
    is: the set-up cells find this crate at ".."), so that its check is seen to pass while the notebook
    itself shows only the task. The folder (None when there is nothing to write: no homework, or no
    solutions/ in a students' copy) and the versions' paths."""
    homework = [path for path in notebooks if any(
        "<!-- check: solved " in c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown")]
    if not homework or not os.path.isdir(os.path.join(root, "solutions")):
        return None, []
    import subprocess
    import tempfile

    scratch = tempfile.mkdtemp(prefix=SOURCE, dir=root)
    subprocess.run(["cargo", "run", "--quiet", "--package", "anatomy-cli", "--", "notebooks", "release", "--source",
                    "--root", root, "--out", scratch], cwd=root, check=True, stdout=subprocess.DEVNULL)
    return scratch, [os.path.join(scratch, os.path.basename(path)) for path in homework]


def two_at_a_time(runs, root):
    """Every notebook run to its end, two kernels at a time: on two cores a kernel spends much of a cell
    waiting for the compiler, and the run takes about half as long. The pool's two workers each take their
    first notebook at once, so the first two kernels start at the same moment, as a learner's two open
    notebooks do: each must build in its own folder, or they break each other (scripts/kernel.py), and each
    needs ports of its own. `runs` holds each notebook with whether it is kept for the book; each one's
    problems, in that order."""
    notebooks = [path for path, _ in runs]
    import multiprocessing

    from jupyter_client.connect import LocalPortCache

    # Each kernel's ports are chosen here, once, from one cache: two forked processes choosing their own
    # could pick the same free port, and the second kernel then died with "Address already in use".
    cache = LocalPortCache.instance()
    ports = [[cache.find_available_port("127.0.0.1") for _ in PORT_NAMES] for _ in notebooks]
    # The longest first (the later chapters train models: chapter 12's takes two minutes), one at a time to
    # whichever kernel is free, so that the two end together.
    order = sorted(range(len(notebooks)), key=lambda i: os.path.basename(notebooks[i]), reverse=True)
    if len(order) > 1:
        first = " and ".join(shown(notebooks[i]) for i in order[:2])
        print(f"[notebooks] two kernels at a time, the first two started together: {first}", flush=True)
    with multiprocessing.get_context("fork").Pool(2) as pool:
        done = pool.starmap(check, [(notebooks[i], root, runs[i][1], ports[i]) for i in order], chunksize=1)
    problems = [None] * len(notebooks)
    for i, found in zip(order, done):
        problems[i] = found
    return problems


def self_test(root):
    """The late-output check must be able to fail: a two-cell notebook runs twice, as it is (no problem
    may be found) and with its first cell's last line held back until after that cell's idle status
    (the run must fail, naming cell 1 and the line)."""
    import tempfile

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell('println!("first cell, first line");\nprintln!("first cell, last line");'),
                nbformat.v4.new_code_cell('println!("second cell");')]
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "late-output-self-test.ipynb")
        nbformat.write(nb, path)
        clean = check(path, root, keep=False)
        late = check(path, root, keep=False, hold_back="first cell, last line")
    wanted = [p for p in late if p.startswith("cell 1: 1 stream message(s) arrived") and "first cell, last line" in p]
    if clean or not wanted:
        print(f"[notebooks] FAILED self-test of the late-output check: as it is {clean}, held back {late}", flush=True)
        sys.exit(1)
    print(f"[notebooks] self-test: a line held back past its cell's idle status fails the run: {wanted[0]}", flush=True)


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
    if every:
        self_test(root)
    failed, failures = 0, []
    began = time.perf_counter()
    scratch, versions = instructors_versions(root, notebooks)
    runs = [(path, True) for path in notebooks] + [(path, False) for path in versions]
    try:
        done = two_at_a_time(runs, root)
    finally:
        if scratch:
            import shutil

            shutil.rmtree(scratch, ignore_errors=True)
    for (path, _), problems in zip(runs, done):
        for p in problems:
            print(f"[notebooks] FAILED {shown(path)}: {p}", flush=True)
            failures.append(f"{shown(path)}: {p}")
        failed += bool(problems)
    passed = len(runs) - failed
    print(f"[notebooks] all notebooks: {time.perf_counter() - began:.0f} s")
    # Again at the very end, where a log cut to its last lines (CI's) still shows which notebook and why.
    for p in failures:
        print(f"[notebooks] FAILED {p[:1500]}", flush=True)
    print(f"notebooks: {passed} passed, {failed} failed")
    sys.exit(1 if failed or not notebooks else 0)


if __name__ == "__main__":
    main()
