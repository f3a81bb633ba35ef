"""Opens and closes connections to one Rust kernel the way JupyterLab's server does when a page opens a
notebook, over and over, and fails as soon as a request goes unanswered (scripts/evcxr/README.md, the
second patch: before it, the kernel's shell channel could stop answering for good).

    kernel-connections.py EVCXR [--seconds S] [--hogs H]

Each round: a short-lived connection asks for the kernel's info and is closed as soon as the reply comes
(the server's own question before it opens a page's channels), while two new connections are made at the
same moment and each asks too (the page's channels and the server's check that they work). Every request
must be answered within 10 s. H processes that only burn CPU make the moments when the kernel's threads
are descheduled more frequent. The run ends after S seconds (exit status 0) or at the first unanswered
request (exit status 1, naming the round and when it came; where gdb is installed, what the kernel's
threads were doing is printed too).
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import zmq
from jupyter_client.connect import LocalPortCache
from jupyter_client.session import Session

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_notebooks import PORT_NAMES  # noqa: E402


class Unanswered(Exception):
    pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("evcxr")
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--hogs", type=int, default=0)
    args = parser.parse_args()
    # A signal ends the run through the `finally` below, which stops the kernel and the hogs.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(2))

    key = uuid.uuid4().hex
    cache = LocalPortCache.instance()  # as run_notebooks.py and notebook-stress.py choose them: never one twice
    ports = {name: cache.find_available_port("127.0.0.1") for name in PORT_NAMES}
    folder = tempfile.mkdtemp(prefix="anatomy-kernel-connections-")
    kernel, hogs = None, []
    try:
        control_file = os.path.join(folder, "kernel.json")
        with open(control_file, "w") as f:
            json.dump(dict(ports, ip="127.0.0.1", transport="tcp", key=key, signature_scheme="hmac-sha256"), f)
        # The kernel's build folder and configuration are the run's own: nothing of the user's is read.
        env = dict(os.environ, EVCXR_TMPDIR=os.path.join(folder, "build"), EVCXR_CONFIG_DIR=os.path.join(folder, "config"))
        kernel = subprocess.Popen([args.evcxr, "--control_file", control_file], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        hogs = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(args.hogs)]
        rounds, seconds = run(kernel, key, ports, args.seconds)
        print(f"[kernel-connections] every request answered: {rounds} rounds, {3 * rounds} requests in {seconds:.0f} s"
              f" with {args.hogs} CPU hog(s)")
    except Unanswered as e:
        print(f"[kernel-connections] {e}", flush=True)
        if kernel.poll() is None and shutil.which("gdb"):  # what the kernel's threads were doing
            out = subprocess.run(["timeout", "60", "gdb", "-p", str(kernel.pid), "-batch", "-ex", "thread apply all bt 12"],
                                 capture_output=True, text=True).stdout
            print("\n".join(line[:200] for line in out.splitlines() if line.startswith(("#", "Thread"))))
        sys.exit(1)
    finally:
        if kernel is not None:
            kernel.kill()
            kernel.wait()
        for hog in hogs:
            hog.kill()
            hog.wait()
        shutil.rmtree(folder, ignore_errors=True)


def run(kernel, key, ports, seconds):
    """Rounds of a page's opening until SECONDS have passed; raises Unanswered at the first request that
    gets no reply within 10 s (60 s for the very first, while the kernel starts)."""
    context = zmq.Context()
    session = Session(key=key.encode())
    shell = f"tcp://127.0.0.1:{ports['shell_port']}"

    # A subscriber that reads everything the kernel publishes, as the server's do: one that never read
    # would fill its buffers and in the end hold up the kernel's publisher, a different hang.
    def read_iopub():
        sub = context.socket(zmq.SUB)
        sub.setsockopt(zmq.SUBSCRIBE, b"")
        sub.connect(f"tcp://127.0.0.1:{ports['iopub_port']}")
        while True:
            sub.recv_multipart()
    threading.Thread(target=read_iopub, daemon=True).start()

    def connection():
        s = context.socket(zmq.DEALER)
        s.setsockopt(zmq.LINGER, 0)
        s.connect(shell)
        return s

    start, rounds = time.time(), 0

    def answered(s, what, timeout=10):
        if s.poll(int(timeout * 1000)) == 0:
            state = "the kernel has exited" if kernel.poll() is not None else "the kernel is still running"
            raise Unanswered(f"round {rounds}: {what} was not answered within {timeout} s "
                             f"({time.time() - start - timeout:.1f} s into the run; {state})")
        s.recv_multipart()

    first = connection()
    session.send(first, "kernel_info_request")
    answered(first, "the first request", timeout=60)
    first.close()
    start = time.time()
    while time.time() - start < seconds:
        rounds += 1
        short = connection()
        session.send(short, "kernel_info_request")
        page, check = connection(), connection()
        answered(short, "the short-lived connection's request")
        short.close()
        for s in (page, check):
            session.send(s, "kernel_info_request")
            answered(s, "a new connection's request")
            s.close()
    return rounds, time.time() - start


if __name__ == "__main__":
    main()
