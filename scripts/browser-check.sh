#!/usr/bin/env bash
# Part of `make test`: renders the head, model and neuron views in headless Chromium (Debian's package,
# installed here if missing) and fails on any console error, or if the head view's script did not run;
# then the class report of a made-up class (scripts/demo-class.py): no console message, a <title> in
# every <svg>, and nothing wider than a 1300 px window (measured by a copy of the page with a probe).
# `scripts/browser-check.sh --picture` also remakes exercises/class-report.png, docs/instructors.md's picture of
# that report: the top of the page at 1300 px, scaled to 0.6 so that the file stays small.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/chromium.sh"
ensure_chromium
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$root"
cargo build --quiet --package anatomy-cli
failures=0
write_pages "$work"
for view in head model neuron; do
  render "$work" "$view" "file://$work/$view.html"
  if grep -q "CONSOLE" "$work/$view.log"; then
    echo "[browser] $view view: console messages:"; grep "CONSOLE" "$work/$view.log"; failures=$((failures + 1))
  elif ! grep -q "<svg" "$work/$view.dom"; then
    echo "[browser] $view view: the page did not render (no svg in the DOM)"; failures=$((failures + 1))
  elif [[ $view == head ]] && ! grep -q 'data-drawn-by="script"' "$work/$view.dom"; then
    echo "[browser] head view: the script did not redraw the picture"; failures=$((failures + 1))
  fi
done
render "$work" alignment "file://$work/alignment.html"
if grep -q "CONSOLE" "$work/alignment.log"; then
  echo "[browser] alignment picture: console messages:"; grep "CONSOLE" "$work/alignment.log"; failures=$((failures + 1))
elif ! grep -q "<svg" "$work/alignment.dom" || ! grep -q "Encoder-decoder attention" "$work/alignment.dom"; then
  echo "[browser] alignment picture: the page did not render"; failures=$((failures + 1))
fi
render "$work" report "file://$work/report/index.html"
if [[ ${1:-} == --picture ]]; then
  timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
    --user-data-dir="$work/profile-picture" --window-size=1300,1000 --force-device-scale-factor=0.6 \
    --screenshot="$root/exercises/class-report.png" "file://$work/report/index.html" 2>/dev/null
  echo "[browser] wrote exercises/class-report.png"
fi
svgs=$(grep -o "<svg" "$work/report.dom" | wc -l)
titled=$(grep -o "<svg[^>]*><title>[^<]" "$work/report.dom" | wc -l)
probe='<script>addEventListener("load",()=>{const w=document.documentElement.clientWidth;const o=[...document.querySelectorAll("body *")].filter(e=>e.getBoundingClientRect().right>w+1).map(e=>e.tagName);const p=document.createElement("pre");p.textContent="OVERFLOW "+JSON.stringify(o.slice(0,10))+" SCROLL "+document.documentElement.scrollWidth+"/"+w;document.body.append(p)})</script>'
sed "s|</body>|$probe</body>|" "$work/report/index.html" >"$work/report/probe.html"
timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$work/profile-probe" \
  --window-size=1300,1000 --virtual-time-budget=3000 --dump-dom "file://$work/report/probe.html" 2>/dev/null \
  | grep -o 'OVERFLOW \[.*SCROLL [0-9/]*' >"$work/overflow.txt" || true
if grep -q "CONSOLE" "$work/report.log"; then
  echo "[browser] class report: console messages:"; grep "CONSOLE" "$work/report.log"; failures=$((failures + 1))
elif [[ $svgs -lt 3 || $titled != "$svgs" ]]; then
  echo "[browser] class report: $svgs charts, $titled with a <title>"; failures=$((failures + 1))
elif ! grep -qx 'OVERFLOW \[\] SCROLL \([0-9]*\)/\1' "$work/overflow.txt"; then
  echo "[browser] class report: wider than 1300 px: $(cat "$work/overflow.txt")"; failures=$((failures + 1))
fi
echo "[browser] $((5 - failures)) passed, $failures failed"
[[ $failures == 0 ]]
