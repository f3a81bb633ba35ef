#!/usr/bin/env bash
# Part of `make test`: renders the head, model and neuron views in headless Chromium (Debian's package,
# installed here if missing) and fails on any console error, or if the head view's script did not run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if ! command -v chromium >/dev/null; then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    echo "[browser] installing Debian's chromium for the picture check"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null
  else
    echo "[browser] chromium is missing: install it (Debian: sudo apt-get install chromium) and run again" >&2
    exit 1
  fi
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$root"
cargo build --quiet --bin anatomy
failures=0
for view in head model neuron; do
  target/debug/anatomy attention --view "$view" --layer 0 --head 8 --token 2 -o "$work/$view.html" \
    "time flies like an arrow" "fruit flies like a banana" >/dev/null
  timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$work/profile-$view" --enable-logging=stderr --v=0 \
    --dump-dom "file://$work/$view.html" >"$work/$view.dom" 2>"$work/$view.log" || true
  if grep -q "CONSOLE" "$work/$view.log"; then
    echo "[browser] $view view: console messages:"; grep "CONSOLE" "$work/$view.log"; failures=$((failures + 1))
  elif ! grep -q "<svg" "$work/$view.dom"; then
    echo "[browser] $view view: the page did not render (no svg in the DOM)"; failures=$((failures + 1))
  elif [[ $view == head ]] && ! grep -q 'data-drawn-by="script"' "$work/$view.dom"; then
    echo "[browser] head view: the script did not redraw the picture"; failures=$((failures + 1))
  fi
done
echo "[browser] $((3 - failures)) passed, $failures failed"
[[ $failures == 0 ]]
