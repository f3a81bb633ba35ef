#!/usr/bin/env bash
# The fuzzing harness of the grader's intake (fuzz/, crates/intake/src/harness.rs).
#   scripts/fuzz.sh seed          write the seed corpus: every hostile, wrong and reference file the project
#                                 keeps, and made-up nestings past and within the bounds (scripts/fuzz-seeds.py)
#   scripts/fuzz.sh run [SECONDS] fuzz each target for SECONDS (default 60), one after another, on the nightly
#                                 toolchain with cargo-fuzz (installed, pinned, on first use); what libFuzzer
#                                 finds worth keeping goes into fuzz/corpus/TARGET/, a crash into
#                                 fuzz/artifacts/TARGET/ and ends the run with exit 1
# `make fuzz FUZZ_SECONDS=N` runs both. `cargo test -p anatomy-intake` replays the corpus (in `make test`).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
targets=(rules notebook similarity time names tape roster printed)
CARGO_FUZZ_VERSION=0.13.2

case "${1:-}" in
seed)
  python3 scripts/fuzz-seeds.py
  ;;
run)
  seconds="${2:-60}"
  if ! rustup toolchain list | grep -q '^nightly'; then
    echo "fuzz: the nightly toolchain is missing: rustup toolchain install nightly" >&2
    exit 1
  fi
  if [ "$(cargo fuzz --version 2>/dev/null | awk '{print $2}')" != "$CARGO_FUZZ_VERSION" ]; then
    echo "[fuzz] installing cargo-fuzz $CARGO_FUZZ_VERSION (once)"
    cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked
  fi
  cd fuzz
  for target in "${targets[@]}"; do
    mkdir -p "corpus/$target"
    echo "[fuzz] $target for $seconds s ($(ls "corpus/$target" | wc -l) inputs in its corpus)"
    # No sanitizer: the intake is safe Rust, and what is looked for is a panic, an abort (a stack
    # overflow) or a time-out, which libFuzzer sees without one. 64 KiB inputs reach the token limit.
    cargo +nightly fuzz run --sanitizer none "$target" "corpus/$target" -- \
      -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=4096 -print_final_stats=1
  done
  ;;
*)
  echo "usage: scripts/fuzz.sh seed | run [SECONDS]" >&2
  exit 2
  ;;
esac
