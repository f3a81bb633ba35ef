"""Stresses the notebook kernel's output path and counts what arrives late: several kernels at once, each
running many cells that print and end with LibTorch work (whose threads keep the cores busy as the cell
ends, as the chapters' cells do), beside CPU hogs. Every IOPub message is recorded with its parent
(run_notebooks.RecordingClient); a cell's output that arrives after the cell's "idle" status, or is not
complete within run_notebooks.IOPUB_TIMEOUT of its reply, is counted.

    .deps/venv-nb/bin/python scripts/notebook-stress.py [--kernels 3] [--cells 100] [--hogs 2] [--lines 5] [--size 256]

Run through `scripts/notebooks.sh stress ...`, which sets up the kernel as `make test` does. Prints one
line per kernel and a total: "K kernels × C cells: L late messages in M cells, T output waits timed out".
"""
import argparse
import multiprocessing
import os
import subprocess
import sys
import time

import nbformat

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_notebooks import PORT_NAMES, new_client  # noqa: E402

SETUP = """:dep transformer_anatomy = { path = "..", package = "transformer-anatomy" }
:dep tch = "=0.26.0"
use tch::{Kind, Tensor};
println!("ready");"""


def cell(n, lines, size):
    body = "\n".join(f'println!("cell {n} line {i}");' for i in range(lines))
    # LibTorch's intra-op threads run the product and spin a while after it, as the cell ends.
    return (f"{body}\nlet product = Tensor::randn([{size}, {size}], (Kind::Float, tch::Device::Cpu)).matmul("
            f"&Tensor::randn([{size}, {size}], (Kind::Float, tch::Device::Cpu)));\n"
            f'println!("cell {n} last line {{}}", product.size()[0]);')


def run(args):
    index, cells, lines, size, root, ports = args
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(SETUP)] + [nbformat.v4.new_code_cell(cell(n, lines, size)) for n in range(1, cells + 1)]
    client = new_client(nb, os.path.join(root, "notebooks"), ports)
    began = time.perf_counter()
    failure = None
    try:
        client.execute()
    except Exception as error:  # a timed-out output wait (CellTimeoutError) or a failed cell
        failure = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
    code = [c for c in nb.cells if c.cell_type == "code"][1:]
    missing = sum(1 for n, c in enumerate(code, 1)
                  if f"cell {n} last line" not in "".join(o.get("text", "") for o in c.get("outputs", [])))
    late_cells = {number for number, *_ in client.late}
    return index, len(client.late), len(late_cells), len(client.early), missing, failure, time.perf_counter() - began


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kernels", type=int, default=3)
    parser.add_argument("--cells", type=int, default=100)
    parser.add_argument("--hogs", type=int, default=2)
    parser.add_argument("--lines", type=int, default=5)
    parser.add_argument("--size", type=int, default=256, help="the side of the matrices each cell multiplies")
    args = parser.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    from jupyter_client.connect import LocalPortCache

    cache = LocalPortCache.instance()
    ports = [[cache.find_available_port("127.0.0.1") for _ in PORT_NAMES] for _ in range(args.kernels)]
    hogs = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(args.hogs)]
    try:
        with multiprocessing.get_context("fork").Pool(args.kernels) as pool:
            results = pool.map(run, [(i, args.cells, args.lines, args.size, root, ports[i]) for i in range(args.kernels)])
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    late = cells_late = early = missing = timeouts = 0
    for index, n_late, n_cells, n_early, n_missing, failure, seconds in results:
        print(f"kernel {index}: {n_late} late messages in {n_cells} cells, {n_early} early (under the next cell's "
              f"name), {n_missing} last lines missing from their cell, {seconds:.0f} s"
              + (f"; {failure}" if failure else ""), flush=True)
        late, cells_late, early, missing = late + n_late, cells_late + n_cells, early + n_early, missing + n_missing
        timeouts += bool(failure and "Timeout" in failure)
    print(f"{args.kernels} kernels × {args.cells} cells ({args.hogs} CPU hogs, {args.lines + 1} lines and a "
          f"{args.size}² product a cell): "
          f"{late} late messages in {cells_late} cells, {early} early ones, {missing} last lines missing from their "
          f"cell, {timeouts} output waits timed out")


if __name__ == "__main__":
    main()
