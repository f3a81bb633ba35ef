#!/usr/bin/env bash
# Sets up what the notebooks need, then runs them (part of `make test`) or starts Jupyter
# (`make notebooks`). Everything lives in the project's git-ignored .deps/ folder:
#   evcxr_jupyter      the Rust kernel: the published crate (pinned version and sha256) with our patches
#                      (scripts/evcxr/), built once into the download cache beside the wheels
#                      (${ANATOMY_CACHE:-~/.cache/transformer-anatomy})
#   .deps/venv-nb      nbclient, nbconvert, jupyter_client (pinned); jupyterlab for `launch`, `lab-check`
#   .deps/jupyterlab-check  playwright-core for `lab-check` (pinned: scripts/jupyterlab/package-lock.json)
#   .deps/jupyter      a project-local Jupyter data dir with the "rust" kernelspec
#   .deps/evcxr-config evcxr.toml: a panic fails the cell, unoptimized builds
#   .deps/evcxr-tmp    the warmed build (tch and this crate, compiled once); every kernel starts from a
#                      copy of it in .deps/evcxr-kernels/<pid> (scripts/kernel.py), so notebooks can run
#                      side by side
#   .deps/spam-assassin/examples.jsonl  chapter 12's labelled examples, prepared once from the corpus
#
#   scripts/notebooks.sh prepare  fetch JupyterLab, the browser and the checks' npm packages, then build
#                                 and warm the kernel (the first step of `make test`'s pages lane)
#   scripts/notebooks.sh run      execute every notebook in order and check its outputs
#   scripts/notebooks.sh launch   start JupyterLab on localhost with the Rust kernel
#   scripts/notebooks.sh book     target/book/: the executed notebooks as static pages (after `run`)
#   scripts/notebooks.sh spam-examples ANATOMY  chapter 12's examples, prepared with that anatomy command
#                                 if they are not there yet (`make test`'s cargo lane)
#   scripts/notebooks.sh lab-check [--no-stop] [NOTEBOOK...]  two notebooks (03 and 10 unless named)
#                                 opened, run together, saved and (unless --no-stop) stopped in JupyterLab
#                                 in headless Chromium
#   scripts/notebooks.sh stress [--kernels K --cells C --hogs H]  count output that arrives after its
#                                 cell's idle status (scripts/notebook-stress.py)
#   scripts/notebooks.sh connections [--seconds S --hogs H]  open and close connections to one kernel as
#                                 JupyterLab's server does; fail on the first unanswered request
#                                 (scripts/kernel-connections.py)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
deps="$root/.deps"
evcxr_version=0.22.0
# The published crate, and its src/core.rs before and after our two patches, applied in this order
# (scripts/evcxr/README.md says what each changes and why): each is checked, so the kernel is exactly this
# source or is not built. The second patch uses a tokio option that needs `--cfg tokio_unstable`.
evcxr_crate_sha256=3ce0d7b3058f68a9673df4f1266b641942fea0ec131881d095306e509a382764
evcxr_core_sha256=12879330f76d475a83e77b64b242c26fa1b2b9e8a27e49be952315d9254ee77c
evcxr_patched_core_sha256=44b8caccb21d63e666b715944b13e432ded03989ed2b2e880aa24e80f80d90a1
evcxr_patches=("$root/scripts/evcxr/output-sent-before-idle.patch" "$root/scripts/evcxr/kernel-keeps-answering.patch")
evcxr_rustflags="--cfg tokio_unstable"
# Its build profile: the kernel's own speed matters where rust-analyzer works out each cell's variable types
# (rust-analyzer's hir crates), and that part is fast enough at opt-level 1; its IDE features (assists,
# completion, diagnostics, structural search: about 150 of the 680 CPU-seconds the build took at the
# published opt-level 3) only run when a learner asks for a completion, so they build unoptimized. Measured
# on 2 cores: 245 s (477 CPU-s) instead of 348 s (679), and four notebooks ran in 52 s instead of 48 s.
# opt-level 0 throughout builds in 102 s, but the notebooks then take six times as long (148 s against 25).
evcxr_profile=(--config profile.release.opt-level=1)
for crate in ra_ap_ide ra_ap_ide_assists ra_ap_ide_completion ra_ap_ide_diagnostics ra_ap_ide_ssr; do
  evcxr_profile+=(--config "profile.release.package.$crate.opt-level=0")
done
evcxr_build="patched-$({ cat "${evcxr_patches[@]}"; echo "$evcxr_rustflags ${evcxr_profile[*]}"; } | sha256sum | cut -c1-12)"
# ANATOMY_EVCXR_UNPATCHED=1 builds (and uses) the published kernel as it is: only to measure what the
# patches change (scripts/notebook-stress.py, scripts/kernel-connections.py).
[[ ${ANATOMY_EVCXR_UNPATCHED:-0} == 1 ]] && evcxr_build=unpatched
evcxr_root="${ANATOMY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/transformer-anatomy}/evcxr-$evcxr_version-$evcxr_build"
evcxr="$evcxr_root/bin/evcxr_jupyter"
say() { printf '[notebooks] %s\n' "$*"; }

# Chapter 12 reads the spam corpus as labelled examples; decoding the mail needs crates the kernel does not
# build, so the anatomy command prepares them once (seconds) if set-up fetched the corpus: `run` and
# `launch` through `cargo run`, and `make test`'s cargo lane (`spam-examples ANATOMY`, with the command it
# has just built) before its tests, so that `run` needs no cargo there: its `cargo run` waited for cargo's
# lock on the build folder while that lane worked (236 s of a fresh `make test`).
spam_examples() {
  local spam="${ANATOMY_SPAM_DIR:-$deps/spam-assassin}" anatomy=${1:-}
  if [[ -f $spam/raw.jsonl && ! -f $spam/examples.jsonl ]]; then
    say "preparing chapter 12's examples (anatomy classify prepare)"
    if [[ -n $anatomy ]]; then
      (cd "$root" && "$anatomy" classify prepare --dir "$spam" >/dev/null)
    else
      (cd "$root" && cargo run --quiet --package anatomy-cli --bin anatomy -- classify prepare --dir "$spam")
    fi
  fi
}
if [[ ${1:-} == spam-examples ]]; then
  [[ -n ${2:-} ]] || { echo "usage: scripts/notebooks.sh spam-examples path/to/anatomy" >&2; exit 2; }
  spam_examples "$2"
  exit
fi

build_kernel() {
  [[ -f $evcxr_root/.complete ]] && return
  say "building evcxr_jupyter $evcxr_version ($evcxr_build) into $evcxr_root (compiles from source once: about four minutes on 2 cores)"
  src=$(mktemp -d)
  trap 'rm -rf "$src"' EXIT
  # The published crate, fetched by cargo from the registry it uses (as a dependency of an empty package).
  mkdir -p "$src/fetch/src"
  printf '[package]\nname = "fetch"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\nevcxr_jupyter = "=%s"\n' \
    "$evcxr_version" >"$src/fetch/Cargo.toml"
  touch "$src/fetch/src/lib.rs"
  (cd "$src/fetch" && cargo fetch --quiet)
  crate=$(ls "${CARGO_HOME:-$HOME/.cargo}"/registry/cache/*/"evcxr_jupyter-$evcxr_version.crate" | head -n 1)
  echo "$evcxr_crate_sha256  $crate" | sha256sum --check --quiet ||
    { echo "$crate is not the published evcxr_jupyter $evcxr_version (sha256 differs)" >&2; exit 1; }
  tar -xzf "$crate" -C "$src"
  kernel_src="$src/evcxr_jupyter-$evcxr_version"
  echo "$evcxr_core_sha256  $kernel_src/src/core.rs" | sha256sum --check --quiet
  flags=()  # the patched kernel's flags, after any RUSTFLAGS of the caller's
  if [[ $evcxr_build != unpatched ]]; then
    for p in "${evcxr_patches[@]}"; do patch --quiet -p1 -d "$kernel_src" <"$p"; done
    echo "$evcxr_patched_core_sha256  $kernel_src/src/core.rs" | sha256sum --check --quiet ||
      { echo "the patched core.rs is not the one reviewed: ${evcxr_patches[*]}" >&2; exit 1; }
    flags=(RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }$evcxr_rustflags")
  fi
  env "${flags[@]}" CARGO_TARGET_DIR="${ANATOMY_EVCXR_BUILD_DIR:-$src/target}" \
    cargo install "${evcxr_profile[@]}" --locked --quiet --root "$evcxr_root" --path "$kernel_src"
  touch "$evcxr_root/.complete"
  rm -rf "$src"
  trap - EXIT
}

if ! python3 -c "import ensurepip, venv" 2>/dev/null; then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    say "installing Debian's python3-venv"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv) >/dev/null
  else
    echo "python3 cannot make virtualenvs: install python3-venv (Debian: sudo apt-get install python3-venv)" >&2
    exit 1
  fi
fi

venv="$deps/venv-nb"
stamp="$venv/.complete-nbclient0.11.0"
if [[ ! -f $stamp ]]; then
  say "creating $venv with nbclient, nbconvert and jupyter_client"
  python3 -m venv "$venv" || { echo "python3 -m venv failed (Debian: apt-get install python3-venv)" >&2; exit 1; }
  "$venv/bin/pip" install --quiet "nbclient==0.11.0" "nbconvert==7.17.2" "jupyter_client==8.10.0"
  touch "$stamp"
fi

# The kernel needs LibTorch twice: to compile tch inside evcxr (LIBTORCH) and to load it at run time
# (LD_LIBRARY_PATH: the rpath that build.rs gives our own binaries does not reach evcxr's library).
libtorch="${LIBTORCH:-$deps/libtorch/torch}"
export JUPYTER_DATA_DIR="$deps/jupyter" JUPYTER_PATH="$deps/jupyter"
mkdir -p "$deps/jupyter/kernels/rust" "$deps/evcxr-config" "$deps/evcxr-tmp"
kernel_spec() {
# evcxr's own kernelspec first (it also writes version.txt: without it, every kernel start "updates" the
# spec and drops our environment), then ours on top with the environment the kernel needs.
"$evcxr" --install >/dev/null
python3 - "$deps" "$libtorch" "$root" "$evcxr" "$venv/bin/python" <<'PY'
import json, os, sys
deps, libtorch, root, evcxr, python = sys.argv[1:]
env = {
    "LIBTORCH": libtorch,
    "LD_LIBRARY_PATH": ":".join(p for p in [os.path.join(libtorch, "lib"), os.environ.get("LD_LIBRARY_PATH", "")] if p),
    "EVCXR_CONFIG_DIR": os.path.join(deps, "evcxr-config"),
    "ANATOMY_MODEL_DIR": os.path.join(root, "models", "all-MiniLM-L6-v2"),
}
spec = {"argv": [python, os.path.join(root, "scripts", "kernel.py"), evcxr, "{connection_file}"],
        "display_name": "Rust", "language": "rust", "interrupt_mode": "message", "env": env}
with open(os.path.join(deps, "jupyter", "kernels", "rust", "kernel.json"), "w") as f:
    json.dump(spec, f, indent=1)
PY
cat > "$deps/evcxr-config/evcxr.toml" <<TOML
[evcxr]
# No tmpdir here: scripts/kernel.py gives every kernel its own copy of the warmed build (EVCXR_TMPDIR).
# A panic must fail the cell (and so the run), not be shrugged off.
preserve_vars_on_panic = false
# Unoptimized notebook code builds twice as fast; the work happens inside LibTorch anyway.
opt_level = "0"
TOML
}
# `prepare` builds the kernel after what it fetches; everything else needs the kernel first.
if [[ ${1:-run} != prepare ]]; then
  build_kernel
  kernel_spec
fi

jupyterlab() {
  if [[ ! -f $venv/.complete-jupyterlab4.6.6 ]]; then
    say "installing JupyterLab 4.6.6 into $venv"
    "$venv/bin/pip" install --quiet "jupyterlab==4.6.6" && touch "$venv/.complete-jupyterlab4.6.6"
  fi
}
as_root=(); [[ $(id -u) == 0 ]] && as_root=(--allow-root) # e.g. in a container

# Two notebooks opened in JupyterLab in headless Chromium as a learner opens them (scripts/jupyterlab/
# check.mjs says what is checked), in a scratch copy of notebooks/ so that saving changes nothing here.
# Screenshots go to target/jupyterlab/.
lab_check() {
  local stop=()
  [[ ${1:-} == --no-stop ]] && { stop=(--no-stop); shift; }
  local names=("$@")
  [[ ${#names[@]} -gt 0 ]] || names=(03-multi-head-attention.ipynb 10-training.ipynb)
  jupyterlab
  source "$root/scripts/chromium.sh"
  ensure_chromium
  local node_dir="$deps/jupyterlab-check"
  node_packages "$root/scripts/jupyterlab" "$node_dir"
  "$venv/bin/python" "$root/scripts/run_notebooks.py" --warm "$root/notebooks"
  local port token status=0
  # Beside notebooks/, as my-notebooks/ is: the set-up cells find this crate at "..". Removed at the end,
  # also when stopped (Ctrl+C), with the JupyterLab that serves it.
  lab_work=$(mktemp -d "$root/.lab-check.XXXXXX")
  # JupyterLab's log, settings and workspaces of its own, so that nothing of the learner's is read or changed.
  lab_home=$(mktemp -d)
  lab_pid=
  trap 'if [[ -n $lab_pid ]]; then kill "$lab_pid" 2>/dev/null; wait "$lab_pid" 2>/dev/null; fi; rm -rf "$lab_work" "$lab_home"' EXIT
  mkdir -p "$root/target/jupyterlab"
  for name in "${names[@]}"; do cp "$root/notebooks/$name" "$lab_work/"; done
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  token=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
  JUPYTERLAB_SETTINGS_DIR="$lab_home/settings" JUPYTERLAB_WORKSPACES_DIR="$lab_home/workspaces" \
    "$venv/bin/jupyter" lab --ip=127.0.0.1 --port="$port" --no-browser --ServerApp.token="$token" \
    --notebook-dir="$lab_work" --LabApp.expose_app_in_browser=True --ServerApp.log_level=DEBUG "${as_root[@]}" \
    >"$lab_home/log" 2>&1 &
  lab_pid=$!
  for _ in $(seq 60); do
    python3 -c 'import sys, urllib.request as u; u.urlopen(u.Request(sys.argv[1], headers={"Authorization": "token " + sys.argv[2]}), timeout=5)' \
      "http://127.0.0.1:$port/api/status" "$token" 2>/dev/null && break
    sleep 1
  done
  node "$node_dir/check.mjs" "http://127.0.0.1:$port" "$token" "$lab_work" "$root/target/jupyterlab" \
    "${stop[@]}" "${names[@]}" || status=$?
  # What each kernel's threads were doing when the check failed (a kernel that never replied shows
  # where it waits), if gdb is there: to read, not to judge.
  if [[ $status != 0 ]] && command -v gdb >/dev/null; then
    for pid in $(pgrep -f 'bin/evcxr_jupyter' || true); do
      say "threads of evcxr_jupyter $pid ($(tr '\0' ' ' </proc/$pid/cmdline 2>/dev/null | cut -c1-80)):"
      timeout 60 gdb -p "$pid" -batch -ex "thread apply all bt 12" 2>/dev/null | grep -E '^(#|Thread)' | cut -c1-200 || true
    done
  fi
  kill "$lab_pid" 2>/dev/null; wait "$lab_pid" 2>/dev/null || true
  lab_pid=
  # A kernel JupyterLab had to kill (its shutdown took over 5 s on a busy machine) could not remove its
  # copy of the warmed build (about 0.2 GB); that is done here instead.
  python3 "$root/scripts/kernel.py" --remove-ended
  # The server's log at debug level (each kernel connection's nudges and the kernels' status messages),
  # kept for reading after a failure; printed without its debug lines.
  cp "$lab_home/log" "$root/target/jupyterlab/jupyterlab-server.log"
  if [[ $status != 0 ]]; then
    say "JupyterLab's log (last 30 lines, debug lines left out; all of it: target/jupyterlab/jupyterlab-server.log):"
    grep -v '^\[D ' "$lab_home/log" | tail -n 30
  fi
  return "$status"
}

case "${1:-run}" in
  prepare)
    # The first step of `make test`'s pages lane, while the other lane compiles: what is fetched (JupyterLab,
    # the browser, the checks' npm packages) first, as it leaves the cores to cargo, then the kernel's build
    # and its warm-up, which compile. Nothing here waits on this project's own cargo build.
    jupyterlab
    source "$root/scripts/chromium.sh"
    ensure_chromium
    node_packages "$root/scripts/jupyterlab" "$deps/jupyterlab-check"
    node_packages "$root/scripts/a11y" "$deps/a11y-check"
    build_kernel
    kernel_spec
    "$venv/bin/python" "$root/scripts/run_notebooks.py" --warm "$root/notebooks" ;;
  run)
    shift || true
    spam_examples
    "$venv/bin/python" "$root/scripts/run_notebooks.py" "$root/notebooks" "$@" ;;
  book)
    "$venv/bin/python" "$root/scripts/book.py" ;;
  launch)
    jupyterlab
    spam_examples
    "$venv/bin/python" "$root/scripts/run_notebooks.py" --warm "$root/notebooks"
    # The learner's working copies: made from notebooks/ on first use, never overwritten (a chapter added
    # later gets its copy the next time); `anatomy notebooks reset NAME` brings one back as generated.
    mine="$root/my-notebooks"
    mkdir -p "$mine"
    for nb in "$root"/notebooks/*.ipynb; do
      [[ -e $mine/$(basename "$nb") ]] || cp "$nb" "$mine/"
    done
    say "starting JupyterLab on localhost in my-notebooks/ (your copies: edit and save freely;"
    say "  'anatomy notebooks reset NAME' restores one). Open the URL it prints, then 00-overview.ipynb."
    say "Several notebooks can run at once: each kernel builds in its own copy of the warmed build."
    say "Stop (the square button) restarts a kernel's Rust process: variables are gone; Run > Run All Above"
    say "  Selected Cell brings them back."
    say "A kernel idle for 30 minutes with no notebook open on it is shut down (each holds about 1 GB)."
    cd "$mine" && exec "$venv/bin/jupyter" lab --ip=127.0.0.1 --no-browser --notebook-dir="$mine" "${as_root[@]}" \
      --MappingKernelManager.cull_idle_timeout=1800 --MappingKernelManager.cull_interval=300 ;;
  lab-check)
    shift || true
    lab_check "$@" ;;
  stress)
    shift || true
    "$venv/bin/python" "$root/scripts/run_notebooks.py" --warm "$root/notebooks"
    "$venv/bin/python" "$root/scripts/notebook-stress.py" "$@" ;;
  connections)
    shift || true
    "$venv/bin/python" "$root/scripts/kernel-connections.py" "$evcxr" "$@" ;;
  *) echo "usage: scripts/notebooks.sh prepare|run|launch|book|spam-examples ANATOMY|lab-check [--no-stop] [NOTEBOOK...]|stress [OPTIONS]|connections [OPTIONS]" >&2; exit 2 ;;
esac
