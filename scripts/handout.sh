#!/usr/bin/env bash
# `make handout DIR=folder [CLASSROOM=1]`: writes the students' copy of the course into a new folder and
# checks it; with CLASSROOM=1 it is a GitHub Classroom template (exercises/platforms/github-classroom.md).
#
# The copy holds every file git tracks except what instructors keep back: the reference solutions
# (solutions/), the instructors' tests of the exercises and of the grader (crates/cli/tests/exercises.rs,
# tests/exercise-mistakes/, crates/cli/tests/grading_hostile.rs, tests/hostile-class/, the similarity report's
# crates/cli/tests/similarity.rs and tests/similarity-class/, the made-up class's crates/cli/tests/class_grading.rs) and this script. It is then built on its own (in target/handout-build/ of this project, so that a second
# handout reuses the compiled dependencies), must compile nothing when built a second time, and must list
# every declared exercise as "not done" and keep the solutions closed; the homework notebook and its chapter are replaced by their released versions. Nothing
# is written when DIR already exists.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
say() { printf '\033[1m[handout]\033[0m %s\n' "$*"; }
die() { printf '\033[1;31m[handout] error:\033[0m %s\n' "$*" >&2; exit 1; }

dir=${1:-}
[[ -n $dir ]] || die "usage: make handout DIR=new-folder (the students' copy is written there)"
[[ ! -e $dir ]] || die "$dir already exists: name a new folder, so that nothing of yours is overwritten"
command -v git >/dev/null || die "git is missing: the handout copies the files git tracks"

# exercises/kept-back lists them, one path or folder/ a line (the Gradescope zip reads it too).
kept_back="^($(grep -v '^#' "$root/exercises/kept-back" | grep . | sed 's/[.]/\\./g; s#[^/]$#&$#' | paste -sd'|'))"

partial="$dir.partial-$$"
trap 'rm -rf "$partial"' EXIT
mkdir -p "$partial"
count=0
while IFS= read -r -d '' file; do
  [[ $file =~ $kept_back ]] && continue
  [[ -e $root/$file ]] || continue
  mkdir -p "$partial/$(dirname "$file")"
  cp -p "$root/$file" "$partial/$file"
  count=$((count + 1))
done < <(git -C "$root" ls-files -z)
say "copied $count files; kept back solutions/ and the instructors' tests"

# The copy must build and start from scratch: every exercise "not done", the solutions closed.
say "building the copy on its own (its dependencies start from this project's build)"
export LIBTORCH="$root/.deps/libtorch/torch" ANATOMY_DEFAULT_MODEL_DIR="$root/models/all-MiniLM-L6-v2"
export CARGO_TARGET_DIR="$root/target/handout-build"
# The copy's dependencies are this project's, built the same way: start from hard links to what is built
# here, so that cargo finds them fresh and compiles only the copy's own packages. Those are left out of the
# links: cargo gives a package the same hash wherever it lives, and their files would be rewritten in place.
# Every crate of the workspace is named transformer-anatomy or anatomy-<stage>: the pattern names them all.
own='^(lib)?(transformer[-_])?anatomy([-_][a-z]+)*-'
if [[ ! -d $CARGO_TARGET_DIR/debug && -d $root/target/debug/deps ]]; then
  for part in deps build .fingerprint; do
    mkdir -p "$CARGO_TARGET_DIR/debug/$part"
    for item in "$root/target/debug/$part"/*; do
      name=$(basename "$item")
      [[ $name =~ $own || ! -e $item ]] && continue
      # Test binaries of this project (tests/*.rs) carry their own names: only libraries and build outputs.
      [[ $part == deps && ! $name =~ ^lib ]] && continue
      cp -al "$item" "$CARGO_TARGET_DIR/debug/$part/" 2>/dev/null || true
    done
  done
fi
# As a student builds it: `cargo build`, which builds the grader's recipe too (a default member).
(cd "$partial" && cargo build --quiet) || die "the students' copy does not build"
say "built; building it again must compile nothing"
"$root/scripts/fresh-build.sh" "$partial" || die "a second cargo build of the students' copy compiled again (above)"
scratch=$(mktemp -d)
# The README's own command: `cargo run` must find one program to run.
list=$(cd "$partial" && ANATOMY_EXERCISES_DIR="$scratch" cargo run --quiet -- exercises list) ||
  die "cargo run -- exercises list fails in the students' copy"
# As many as the declaration holds: the rows of the copy's own table of exercises.
declared=$(( $(ANATOMY_EXERCISES_DIR="$scratch" "$CARGO_TARGET_DIR/debug/anatomy" exercises table | wc -l) - 2 ))
not_done=$(grep -c ' not done ' <<<"$list" || true)
[[ $declared -gt 0 && $not_done == "$declared" ]] ||
  die "expected the $declared declared exercises listed as not done in the copy, got $not_done:"$'\n'"$list"
grep -q "^0 of $declared done" <<<"$list" || die "the copy's list does not start from 0 of $declared done:"$'\n'"$list"
if ANATOMY_EXERCISES_DIR="$scratch" "$CARGO_TARGET_DIR/debug/anatomy" exercises solution cross_attention 2>"$scratch/err"; then
  die "the copy shows a solution"
fi
grep -q 'no solutions/ folder' "$scratch/err" || die "the copy's solution command says: $(cat "$scratch/err")"
rm -rf "$scratch"
# The homework notebook and its chapter hold the reference between nbgrader's markers: the copy gets the
# released ones (solution cut to todo!(), nbgrader's metadata and checksums), made by the copy's own binary.
"$CARGO_TARGET_DIR/debug/anatomy" notebooks release --in-place --root "$partial" >/dev/null
if grep -l "BEGIN SOLUTION" "$partial"/chapters/*.md "$partial"/notebooks/*.ipynb; then
  die "a chapter or notebook of the copy above still holds a solution"
fi
say "the homework notebook is the released one (anatomy notebooks release)"
if [[ ${CLASSROOM:-0} == 1 ]]; then
  # A GitHub Classroom template: the grading workflow, and the stubs committed as the students' files
  # (their pushes carry them), so exercises/*.rs is no longer ignored.
  mkdir -p "$partial/.github/workflows"
  cp "$root/exercises/platforms/classroom.yml" "$partial/.github/workflows/classroom.yml"
  ANATOMY_EXERCISES_DIR="$partial/exercises" "$CARGO_TARGET_DIR/debug/anatomy" exercises list >/dev/null
  rm -f "$partial/exercises/.progress.json"
  grep -v '^/exercises/\*\.rs$' "$root/.gitignore" >"$partial/.gitignore"
  say "GitHub Classroom: .github/workflows/classroom.yml grades every push; the stubs are the students' files"
fi
mv "$partial" "$dir"
trap - EXIT
say "the students' copy is in $dir: it builds, lists all $declared exercises as not done and keeps the solutions back"
