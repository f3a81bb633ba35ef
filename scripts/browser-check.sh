#!/usr/bin/env bash
# Part of `make test`: renders the head, model and neuron views in headless Chromium (Debian's package,
# installed here if missing) and fails on any console error, or if the head view's script did not run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/chromium.sh"
ensure_chromium
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$root"
cargo build --quiet --bin anatomy
failures=0
for view in head model neuron; do
  target/debug/anatomy attention --view "$view" --layer 0 --head 8 --token 2 -o "$work/$view.html" \
    "time flies like an arrow" "fruit flies like a banana" >/dev/null
  render "$work" "$view" "file://$work/$view.html"
  if grep -q "CONSOLE" "$work/$view.log"; then
    echo "[browser] $view view: console messages:"; grep "CONSOLE" "$work/$view.log"; failures=$((failures + 1))
  elif ! grep -q "<svg" "$work/$view.dom"; then
    echo "[browser] $view view: the page did not render (no svg in the DOM)"; failures=$((failures + 1))
  elif [[ $view == head ]] && ! grep -q 'data-drawn-by="script"' "$work/$view.dom"; then
    echo "[browser] head view: the script did not redraw the picture"; failures=$((failures + 1))
  fi
done
# The alignment picture of `anatomy translate --attention`, from a small copy model trained here (seconds).
target/debug/anatomy train --task copy --d-model 32 --layers 1 --steps 60 --warmup 30 -o "$work/copy.safetensors" >/dev/null
target/debug/anatomy translate --checkpoint "$work/copy.safetensors" --attention "$work/alignment.html" \
  "3 1 4 1 5 9 2 6 5 3" >/dev/null
render "$work" alignment "file://$work/alignment.html"
if grep -q "CONSOLE" "$work/alignment.log"; then
  echo "[browser] alignment picture: console messages:"; grep "CONSOLE" "$work/alignment.log"; failures=$((failures + 1))
elif ! grep -q "<svg" "$work/alignment.dom" || ! grep -q "Encoder-decoder attention" "$work/alignment.dom"; then
  echo "[browser] alignment picture: the page did not render"; failures=$((failures + 1))
fi
echo "[browser] $((4 - failures)) passed, $failures failed"
[[ $failures == 0 ]]
