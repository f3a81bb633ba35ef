#!/usr/bin/env bash
# Part of `make test` (after the book is made): every page the project writes for a person, checked by
# axe-core (pinned in scripts/a11y/package-lock.json, as playwright-core is) in Debian's headless Chromium
# against the WCAG 2.0 and 2.1 rules of levels A and AA: the book (target/book/), the three attention
# views and the alignment picture, the class report of a made-up class and the similarity page of
# tests/similarity-class. Any violation fails, named with its rule, page and element. The head view is
# also driven from the keyboard alone: Tab reaches a token, Enter and Space pin and unpin it.
# `scripts/a11y-check.sh --no-book` leaves the book out (when it has not been made).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
deps="$root/.deps"
source "$root/scripts/chromium.sh"
ensure_chromium
node_dir="$deps/a11y-check"
node_packages "$root/scripts/a11y" "$node_dir"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$root"
cargo build --quiet --bin anatomy
pages=()
for view in head model neuron; do
  target/debug/anatomy attention --view "$view" --layer 0 --head 8 --token 2 -o "$work/$view.html" \
    "time flies like an arrow" "fruit flies like a banana" >/dev/null
  pages+=("$view view=file://$work/$view.html")
done
target/debug/anatomy train --task copy --d-model 32 --layers 1 --steps 60 --warmup 30 -o "$work/copy.safetensors" >/dev/null
target/debug/anatomy translate --checkpoint "$work/copy.safetensors" --attention "$work/alignment.html" \
  "3 1 4 1 5 9 2 6 5 3" >/dev/null
pages+=("alignment picture=file://$work/alignment.html")
python3 scripts/demo-class.py "$work/class" >/dev/null
target/debug/anatomy exercises grade "$work/class" --report "$work/report" >/dev/null 2>"$work/grade.log" \
  || { cat "$work/grade.log"; exit 1; }
pages+=("class report=file://$work/report/index.html")
target/debug/anatomy exercises similarity tests/similarity-class --html "$work/similarity.html" >/dev/null
pages+=("similarity page=file://$work/similarity.html")
if [[ ${1:-} != --no-book ]]; then
  ls "$root"/target/book/*.html >/dev/null 2>&1 || { echo "[a11y] target/book/ is empty: run scripts/notebooks.sh book first (or pass --no-book)" >&2; exit 1; }
  for page in "$root"/target/book/*.html; do
    pages+=("book $(basename "$page")=file://$page")
  done
fi
node "$node_dir/check.mjs" "${pages[@]}" --keyboard "head view (keyboard)=file://$work/head.html"
