#!/usr/bin/env bash
# make test-gpu: on a machine with an NVIDIA GPU, the chapter's code on CUDA checked against the same code on
# the CPU, and timed against the book's PyTorch code on the same GPU (`anatomy check-gpu`, one table; exit
# code 1 on any failed row). What it checks and why: docs/learners.md, "Running on a GPU".
#
# LibTorch: $LIBTORCH when it is set and holds libtorch_cuda.so (a machine's own PyTorch of the version
# tch expects, 2.13.0 for tch 0.26), else the one `make setup CUDA=1` installs into .deps/venv-cuda. The
# PyTorch side of the speed checks: $ANATOMY_GPU_PYTHON, else that virtualenv's python. The build goes to
# target/cuda/, so that the CPU build in target/ stays as it is.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
say() { printf '\033[1m[test-gpu]\033[0m %s\n' "$*"; }
die() { printf '\033[1;31m[test-gpu] error:\033[0m %s\n' "$*" >&2; exit 1; }

# First what a GPU needs, before anything is downloaded or built.
if ! compgen -G '/dev/nvidia[0-9]*' >/dev/null && ! command -v nvidia-smi >/dev/null; then
  die "no NVIDIA GPU here (no /dev/nvidia0, no nvidia-smi): make test-gpu runs on a machine with an NVIDIA GPU and its driver; make test checks everything else"
fi

if [[ -n ${LIBTORCH:-} && -f $LIBTORCH/lib/libtorch_cuda.so ]]; then
  say "LibTorch from \$LIBTORCH: $LIBTORCH"
else
  [[ -z ${LIBTORCH:-} ]] || say "\$LIBTORCH ($LIBTORCH) has no lib/libtorch_cuda.so: using make setup CUDA=1's instead"
  CUDA=1 scripts/setup.sh
  LIBTORCH=$(ls -d "$root"/.deps/venv-cuda/lib/python3*/site-packages/torch 2>/dev/null | head -n 1)
  [[ -f ${LIBTORCH:-}/lib/libtorch_cuda.so ]] || die "make setup CUDA=1 gave no libtorch_cuda.so (in ${LIBTORCH:-.deps/venv-cuda})"
fi
export LIBTORCH
python=${ANATOMY_GPU_PYTHON:-$root/.deps/venv-cuda/bin/python}
pytorch=()
if "$python" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  pytorch=(--pytorch "$python")
else
  say "no Python with a PyTorch that sees the GPU at $python (set ANATOMY_GPU_PYTHON): the speed checks are left out, and the run fails"
fi

export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target/cuda}
say "building the anatomy command against $LIBTORCH (release, in $CARGO_TARGET_DIR)"
cargo build --release --package anatomy-cli
status=0
"$CARGO_TARGET_DIR/release/anatomy" check-gpu "${pytorch[@]}" || status=$?
[[ ${#pytorch[@]} -gt 0 ]] || { echo "[test-gpu] the speed checks did not run: no PyTorch on the GPU" >&2; status=1; }
exit $status
