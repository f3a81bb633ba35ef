#!/usr/bin/env bash
# `make handout DIR=folder [CLASSROOM=1]`: writes the students' copy of the course into a new folder and
# checks it; with CLASSROOM=1 it is a GitHub Classroom template (exercises/platforms/github-classroom.md).
# The work is `anatomy exercises handout DIR [--classroom]` (crates/platforms/src/handout.rs): what is kept
# back (exercises/kept-back), the copy's own build and its checks. This only passes make's arguments on.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
classroom=()
[[ ${CLASSROOM:-0} == 1 ]] && classroom=(--classroom)
exec "${CARGO:-cargo}" run --quiet --manifest-path "$root/Cargo.toml" --package anatomy-cli --bin anatomy -- \
  exercises handout "${1:-}" "${classroom[@]}"
