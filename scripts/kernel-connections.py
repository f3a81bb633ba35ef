"""Opens and closes connections to one Rust kernel the way JupyterLab's server does when a page opens a
notebook, over and over, and fails as soon as a request goes unanswered (scripts/evcxr/README.md, the
second patch: before it, the kernel's shell channel could stop answering for good).

    kernel-connections.py EVCXR [--seconds S] [--hogs H]

Each round: a short-lived connection asks for the kernel's info and is closed as soon as the reply comes
(the server's own question before it opens a page's channels), while two new connections are made at the
same moment and each asks too (the page's channels and the server's check that they work). Every request
must be answered within 10 s. H processes that only burn CPU make the moments when the kernel's threads
are descheduled more frequent. Exit status 1 on the first unanswered request, naming the round; where gdb
is installed, what the kernel's threads were doing is printed too.
"""
import argparse
import json
import multiprocessing
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import zmq
from jupyter_client.session import Session


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def burn():
    while True:
        pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("evcxr")
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--hogs", type=int, default=0)
    args = parser.parse_args()

    key = uuid.uuid4().hex
    ports = {name: free_port() for name in ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port")}
    folder = tempfile.mkdtemp(prefix="anatomy-kernel-connections-")
    control_file = os.path.join(folder, "kernel.json")
    with open(control_file, "w") as f:
        json.dump(dict(ports, ip="127.0.0.1", transport="tcp", key=key, signature_scheme="hmac-sha256"), f)
    env = dict(os.environ, EVCXR_TMPDIR=os.path.join(folder, "build"))
    kernel = subprocess.Popen([args.evcxr, "--control_file", control_file], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    hogs = [multiprocessing.Process(target=burn, daemon=True) for _ in range(args.hogs)]
    for hog in hogs:
        hog.start()

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

    def answered(s, seconds):
        if s.poll(int(seconds * 1000)) == 0:
            return False
        s.recv_multipart()
        return True

    def end(status, text):
        print(f"[kernel-connections] {text}", flush=True)
        if status and shutil.which("gdb"):
            out = subprocess.run(["gdb", "-p", str(kernel.pid), "-batch", "-ex", "thread apply all bt 12"],
                                 capture_output=True, text=True).stdout
            print("\n".join(l[:200] for l in out.splitlines() if l.startswith(("#", "Thread"))))
        kernel.kill()
        for hog in hogs:
            hog.kill()
        shutil.rmtree(folder, ignore_errors=True)
        sys.exit(status)

    first = connection()
    session.send(first, "kernel_info_request")
    if not answered(first, 60):
        end(1, "the kernel did not answer its first kernel_info_request within 60 s")
    first.close()
    start, rounds = time.time(), 0
    while time.time() - start < args.seconds:
        rounds += 1
        short = connection()
        session.send(short, "kernel_info_request")
        page, check = connection(), connection()
        if not answered(short, 10):
            end(1, f"round {rounds}: the short-lived connection's request was not answered within 10 s")
        short.close()
        for s in (page, check):
            session.send(s, "kernel_info_request")
            if not answered(s, 10):
                end(1, f"round {rounds}: a new connection's request was not answered within 10 s")
            s.close()
    end(0, f"every request answered: {rounds} rounds, {3 * rounds} requests in {time.time() - start:.0f} s"
           f" with {args.hogs} CPU hog(s)")


if __name__ == "__main__":
    main()
