#!/usr/bin/env bash
# Part of `make book` and `make test`: opens every page of target/book/ in headless Chromium and fails on
# any console message, when a page shows fewer pictures (<svg> elements) than its outputs hold, when its
# <title> is not its chapter's heading, or when its navigation is not at both the top and the bottom.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
book="$root/target/book"
source "$root/scripts/chromium.sh"
ensure_chromium
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
for page in "$book"/*.html; do
  name=$(basename "$page" .html)
  render "$work" "$name" "file://$page"
  wanted=$( (grep -o 'data-pictures="[0-9]*"' "$page" || true) | head -1 | grep -o '[0-9]*' || echo 0)
  shown=$( (grep -o '<svg' "$work/$name.dom" || true) | wc -l)
  if grep -q "CONSOLE" "$work/$name.log"; then
    echo "[book] $name: console messages:"; grep "CONSOLE" "$work/$name.log"; failed=$((failed + 1))
  elif ! grep -q "</body>" "$work/$name.dom"; then
    echo "[book] $name: the page did not load"; failed=$((failed + 1))
  elif [[ $(grep -o '<title>[^<]*</title>' "$page" | head -1) != "<title>$(grep -o '<h1[^>]*>[^<]*' "$page" | head -1 | sed 's/<h1[^>]*>//')</title>" ]]; then
    echo "[book] $name: its <title> is not its chapter's heading"; failed=$((failed + 1))
  elif [[ $name != index ]] && (( $(grep -c '<nav class="book"' "$page") != 2 )); then
    echo "[book] $name: the previous/next links are not at both the top and the bottom"; failed=$((failed + 1))
  elif (( shown < wanted )); then
    echo "[book] $name: $shown pictures shown, $wanted in the outputs"; failed=$((failed + 1))
  else
    passed=$((passed + 1))
  fi
done
echo "[book] $passed passed, $failed failed"
[[ $failed == 0 && $passed -gt 0 ]]
