"""Starts one evcxr (Rust) kernel in a build folder of its own: what the "rust" kernelspec runs.

evcxr compiles every cell in a build folder (EVCXR_TMPDIR). Two kernels sharing one folder overwrite each
other's sources and libraries mid-build, so two notebooks started together broke each other. Here every
kernel gets its own copy of the warmed build (.deps/evcxr-tmp, where `scripts/run_notebooks.py --warm`
compiled tch and this crate once), so it starts in seconds and no kernel sees another's files.

    kernel.py EVCXR CONNECTION_FILE

- A copy lives in .deps/evcxr-kernels/<pid> and is removed by the next kernel that starts after this one
  has ended (a kernel that is killed cannot clean up after itself).
- The warm-up itself (ANATOMY_KERNEL_WARMS=1, set by run_notebooks.py --warm) builds in the warm folder
  directly; it holds the folder's lock for writing, so a copy never reads a half-written build.
- Without a warmed build, a kernel builds its own from scratch (minutes, as the first notebook always did).
"""
import fcntl
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEPS = os.path.join(ROOT, ".deps")
WARM = os.path.join(DEPS, "evcxr-tmp")
WARMED = os.path.join(WARM, ".anatomy-warmed")  # written by run_notebooks.py --warm when the build is done
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


def main():
    evcxr, connection_file = sys.argv[1], sys.argv[2]
    if os.environ.get("ANATOMY_KERNEL_WARMS") == "1":
        os.makedirs(WARM, exist_ok=True)
        folder = WARM
    else:
        os.makedirs(KERNELS, exist_ok=True)
        remove_ended_kernels()
        folder = os.path.join(KERNELS, str(os.getpid()))  # exec keeps the pid: the folder is named after the kernel
        shutil.rmtree(folder, ignore_errors=True)
        if os.path.exists(WARMED):
            with open(WARM + ".lock", "a") as lock:
                fcntl.flock(lock, fcntl.LOCK_SH)  # not while a warm-up writes it
                # A real copy (about 0.5 GB, a few seconds): evcxr and cargo rewrite some files in place.
                subprocess.run(["cp", "-a", "--reflink=auto", WARM, folder], check=True)
        else:
            os.makedirs(folder)
    os.environ["EVCXR_TMPDIR"] = folder
    os.execv(evcxr, [evcxr, "--control_file", connection_file])


if __name__ == "__main__":
    main()
