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
cargo build --quiet --package anatomy-cli
write_pages "$work"
pages=("head view=file://$work/head.html" "model view=file://$work/model.html" "neuron view=file://$work/neuron.html"
  "alignment picture=file://$work/alignment.html" "class report=file://$work/report/index.html"
  "similarity page=file://$work/similarity.html")
if [[ ${1:-} != --no-book ]]; then
  ls "$root"/target/book/*.html >/dev/null 2>&1 || { echo "[a11y] target/book/ is empty: run scripts/notebooks.sh book first (or pass --no-book)" >&2; exit 1; }
  for page in "$root"/target/book/*.html; do
    pages+=("book $(basename "$page")=file://$page")
  done
fi
node "$node_dir/check.mjs" "${pages[@]}" --keyboard "head view (keyboard)=file://$work/head.html"
