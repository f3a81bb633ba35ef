#!/usr/bin/env bash
# Creates .deps/venv-ref: PyTorch 2.13.0 (the same LibTorch version the crate runs on) and Hugging Face
# transformers, for reference numbers only: the PyTorch side of `make bench BENCH_PYTORCH=1`, and reference
# values written by scripts in this folder. No test depends on it. About 5 GB (torch brings its CUDA
# libraries), a few minutes. Prints the venv's python path on its last line.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.deps/venv-ref"
stamp="$venv/.complete-torch2.13.0-transformers5.23.0"
if [[ ! -f $stamp ]]; then
  echo "[reference] creating $venv with torch==2.13.0 and transformers==5.23.0 (about 5 GB)" >&2
  python3 -m venv "$venv" >&2 || { echo "[reference] python3 -m venv failed (Debian: apt-get install python3-venv)" >&2; exit 1; }
  "$venv/bin/pip" install --quiet "torch==2.13.0" "transformers==5.23.0" "safetensors" >&2
  touch "$stamp"
fi
echo "$venv/bin/python"
