# Sourced by browser-check.sh, book-check.sh, a11y-check.sh and notebooks.sh: Debian's Chromium, headless,
# with nothing reaching out, and the npm packages the Node.js checks drive it with.
#   ensure_chromium         installs Debian's chromium when it is missing (as root), or says what to do
#   render WORK NAME URL    opens URL; the DOM goes to WORK/NAME.dom, the console to WORK/NAME.log
#   write_pages WORK        writes the pages the project makes for a person, outside the book, into WORK:
#                           the head, model and neuron views, the alignment picture, the class report of
#                           the made-up class (WORK/report/) and the similarity page (run from the root)
#   node_packages SRC DEST  installs the npm packages pinned in SRC/package-lock.json into DEST (again only
#                           when the lock changes) and puts SRC's scripts (*.mjs) beside them
ensure_chromium() {
  command -v chromium >/dev/null && return 0
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    echo "[browser] installing Debian's chromium for the picture checks"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null
  else
    echo "[browser] chromium is missing: install it (Debian: sudo apt-get install chromium) and run again" >&2
    return 1
  fi
}

render() {
  timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$1/profile-$2" --enable-logging=stderr --v=0 \
    --dump-dom "$3" >"$1/$2.dom" 2>"$1/$2.log" || true
}

node_packages() {
  local src=$1 dest=$2
  command -v node >/dev/null || { echo "node is missing: install Node.js 20 or later (Debian: apt-get install nodejs npm)" >&2; return 1; }
  if ! cmp -s "$src/package-lock.json" "$dest/package-lock.json"; then
    echo "[node] installing the packages pinned in $src/package-lock.json into $dest"
    rm -rf "$dest" && mkdir -p "$dest"
    cp "$src/package.json" "$src/package-lock.json" "$dest/"
    (cd "$dest" && npm ci --no-audit --no-fund --loglevel=error) || { rm -rf "$dest"; return 1; }
  fi
  cp "$src"/*.mjs "$dest/" # next to its node_modules, where `import` finds them
}

write_pages() {
  local work=$1 view
  for view in head model neuron; do
    target/debug/anatomy attention --view "$view" --layer 0 --head 8 --token 2 -o "$work/$view.html" \
      "time flies like an arrow" "fruit flies like a banana" >/dev/null
  done
  # The alignment picture of `anatomy translate --attention`, from a small copy model trained here (seconds).
  target/debug/anatomy train --task copy --d-model 32 --layers 1 --steps 60 --warmup 30 -o "$work/copy.safetensors" >/dev/null
  target/debug/anatomy translate --checkpoint "$work/copy.safetensors" --attention "$work/alignment.html" \
    "3 1 4 1 5 9 2 6 5 3" >/dev/null
  # The class report (`anatomy exercises grade --report`) of the made-up class of 30.
  python3 scripts/demo-class.py "$work/class" >/dev/null
  target/debug/anatomy exercises grade "$work/class" --report "$work/report" >/dev/null 2>"$work/grade.log" \
    || { cat "$work/grade.log"; return 1; }
  target/debug/anatomy exercises similarity tests/similarity-class --html "$work/similarity.html" >/dev/null
}
