#!/usr/bin/env bash
# Grades a class's exercises.
#
#   scripts/grade-class.sh SUBMISSIONS [--json]
#
# SUBMISSIONS holds one folder per student with that student's exercise files, either directly
# (SUBMISSIONS/alice/cross_attention.rs) or in an exercises/ folder (SUBMISSIONS/alice/exercises/...);
# a whole copy of the crate works too. A file a student did not hand in counts as the untouched stub.
# Each student's files go into a scratch copy of this crate *without* solutions/ — the copy students
# get — which is built and graded with `anatomy exercises check --json`. Prints a Markdown table, or
# with --json one JSON object per student. Needs `make setup` (LibTorch). The scratch copy builds in
# target/grading: a few minutes the first time, seconds afterwards.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
submissions=${1:?usage: scripts/grade-class.sh SUBMISSIONS [--json]}
format=${2:-table}
[[ -d $submissions ]] || { echo "grade-class: $submissions is not a folder" >&2; exit 2; }
names=(causal_mask cross_attention decoder_layer sinusoidal_positions)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
crate="$work/crate"
mkdir -p "$crate" "$work/reports"
# What a student's copy holds: everything but the solutions (and nothing large).
cp -r "$root/Cargo.toml" "$root/Cargo.lock" "$root/build.rs" "$root/.cargo" "$root/src" "$root/exercises" "$crate/"
export LIBTORCH=${LIBTORCH:-$root/.deps/libtorch/torch}
export CARGO_TARGET_DIR=${ANATOMY_GRADING_TARGET:-$root/target/grading}

for dir in "$submissions"/*/; do
  student=$(basename "$dir")
  cp "$root"/exercises/*.rs "$crate/exercises/" # start from the untouched stubs
  for n in "${names[@]}"; do
    for candidate in "$dir/exercises/$n.rs" "$dir/$n.rs"; do
      if [[ -f $candidate ]]; then cp "$candidate" "$crate/exercises/$n.rs"; break; fi
    done
  done
  # Exit code 1 only means "not all passed"; a build failure leaves no JSON behind.
  (cd "$crate" && cargo run --quiet --bin anatomy -- exercises check --json) \
    >"$work/reports/$student.json" 2>"$work/reports/$student.log" || true
done

python3 - "$work/reports" "$format" "${names[@]}" <<'PY'
import json, os, sys
reports, fmt, names = sys.argv[1], sys.argv[2], sys.argv[3:]
rows = []
for file in sorted(f for f in os.listdir(reports) if f.endswith(".json")):
    student = file[: -len(".json")]
    try:
        report = json.load(open(os.path.join(reports, file)))
        status = {e["name"]: e["status"].replace("_", " ") for e in report["exercises"]}
        passed = report["passed"]
    except (ValueError, KeyError):
        status, passed = {n: "does not compile" for n in names}, 0
    rows.append({"student": student, **{n: status.get(n, "?") for n in names}, "passed": passed, "total": len(names)})
if fmt == "--json":
    for row in rows:
        print(json.dumps(row))
else:
    print("| student | " + " | ".join(names) + " | passed |")
    print("|---" * (len(names) + 2) + "|")
    for r in rows:
        print(f"| {r['student']} | " + " | ".join(r[n] for n in names) + f" | {r['passed']}/{r['total']} |")
PY
