# Sourced by browser-check.sh and book-check.sh: Debian's Chromium, headless, with nothing reaching out.
#   ensure_chromium         installs Debian's chromium when it is missing (as root), or says what to do
#   render WORK NAME URL    opens URL; the DOM goes to WORK/NAME.dom, the console to WORK/NAME.log
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
