"""Starts one evcxr (Rust) kernel in a build folder of its own: what the "rust" kernelspec runs.

evcxr compiles every cell in a build folder (EVCXR_TMPDIR). Two kernels sharing one folder overwrite each
other's sources and libraries mid-build, so two notebooks started together broke each other. Here every
kernel gets its own copy of the warmed build (.deps/evcxr-tmp, where `scripts/run_notebooks.py --warm`
compiled tch and this crate once; the compiled crates are hard-linked, see copy_build), so it starts in
seconds and no kernel sees another's files.

    kernel.py EVCXR CONNECTION_FILE
    kernel.py --remove-ended        only remove the copies of kernels that are no longer running

- A copy lives in .deps/evcxr-kernels/<pid>, <pid> being this wrapper's, which runs evcxr as its child
  and removes the copy when evcxr ends (shut down, restarted, culled); signals it receives are passed on
  to evcxr. A wrapper killed outright cannot clean up: the next kernel to start removes the copy of any
  kernel that is no longer running.
- The warm-up itself (ANATOMY_KERNEL_WARMS=1, set by run_notebooks.py --warm) builds in the warm folder
  directly; it holds the folder's lock for writing, so a copy never reads a half-written build.
- Without a warmed build, a kernel builds its own from scratch (minutes, as the first notebook always did).
"""
import fcntl
import os
import re
import shutil
import signal
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEPS = os.path.join(ROOT, ".deps")
WARM = os.path.join(DEPS, "evcxr-tmp")
WARMED = os.path.join(WARM, ".anatomy-warmed")  # written by run_notebooks.py once the build is whole
KERNELS = os.path.join(DEPS, "evcxr-kernels")


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_ended_kernels():
    for name in os.listdir(KERNELS):
        if name.isdigit() and not alive(int(name)):
            shutil.rmtree(os.path.join(KERNELS, name), ignore_errors=True)


# A compiled crate in a build's deps/ folder: lib<name>-<16 hex digits>.rlib or .rmeta.
COMPILED_CRATE = re.compile(r"^lib.+-[0-9a-f]{16}\.(rlib|rmeta)$")


def copy_build(warm, folder):
    """Copies the warmed build for one kernel, hard-linking the compiled crates (about 0.5 of its 0.75 GB).

    rustc never writes a crate's .rlib or .rmeta in place: a rebuild writes a new file and renames it over
    the old name, so a kernel that rebuilds a crate gets a file of its own and the warm folder and the
    other kernels keep theirs. Everything else (evcxr's sources, fingerprints, incremental state, build
    scripts' output, .d files) is rewritten in place by cargo or evcxr, so it is really copied. Two kernels
    then need about 0.5 GB less disk each; a full copy of every kernel once filled CI's disk.
    """
    def link_or_copy(src, dst):
        if os.path.basename(os.path.dirname(src)) == "deps" and COMPILED_CRATE.match(os.path.basename(src)):
            try:
                os.link(src, dst)
                return dst
            except OSError:  # another file system, or links refused: copy instead
                pass
        return shutil.copy2(src, dst)

    shutil.copytree(warm, folder, symlinks=True, copy_function=link_or_copy)


def main():
    if sys.argv[1:] == ["--remove-ended"]:  # scripts/notebooks.sh lab-check, once its JupyterLab has stopped
        if os.path.isdir(KERNELS):
            remove_ended_kernels()
        return
    evcxr, connection_file = sys.argv[1], sys.argv[2]
    if os.environ.get("ANATOMY_KERNEL_WARMS") == "1":
        os.makedirs(WARM, exist_ok=True)
        folder = WARM
    else:
        os.makedirs(KERNELS, exist_ok=True)
        remove_ended_kernels()
        folder = os.path.join(KERNELS, str(os.getpid()))  # named after this process, which lives as long as the kernel
        shutil.rmtree(folder, ignore_errors=True)
        if os.path.exists(WARMED):
            with open(WARM + ".lock", "a") as lock:
                fcntl.flock(lock, fcntl.LOCK_SH)  # not while a warm-up writes it
                copy_build(WARM, folder)
        else:
            os.makedirs(folder)
    os.environ["EVCXR_TMPDIR"] = folder
    # LibTorch's two OpenMP threads meet at a barrier after every operation, and the one that arrives first
    # spins up to 300,000 times before it sleeps. Jupyter starts each kernel in a session of its own, and
    # Linux shares the CPU between sessions (autogroup): with one busy program in another session (a
    # browser tab, `yes >/dev/null`), the spinning thread used up its session's share while its partner
    # waited for the CPU, and chapter 10's 300 training steps took 420 s instead of 4.4. Spinning 1,000
    # times, the count libgomp itself uses when threads outnumber CPUs, they took 10.1 s beside that
    # program and cost 8-12 % alone (4.5 s against 4.0 and 5.2 against 4.8, measured in turn). A count
    # or wait policy of your own is kept.
    if "GOMP_SPINCOUNT" not in os.environ and "OMP_WAIT_POLICY" not in os.environ:
        os.environ["GOMP_SPINCOUNT"] = "1000"
    if folder == WARM:
        os.execv(evcxr, [evcxr, "--control_file", connection_file])
    # evcxr runs as a child, so that its copy of the build is removed when it ends (Jupyter's shutdown,
    # a restart, the idle cull): about 0.2 GB a kernel, which would otherwise stay until the next start.
    child = subprocess.Popen([evcxr, "--control_file", connection_file])

    def forward(signum, _frame):
        child.send_signal(signum)

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(signum, forward)
    code = child.wait()
    shutil.rmtree(folder, ignore_errors=True)
    sys.exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    main()
