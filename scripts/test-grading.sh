#!/usr/bin/env bash
# Part of `make test`: proves that a student's copy of the crate (without solutions/) builds, and that
# grading a class gives the right table. Three made-up students: one hands in nothing, one the
# reference solutions, one a file that does not compile.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
class=$(mktemp -d)
trap 'rm -rf "$class"' EXIT
mkdir -p "$class/ada" "$class/bob/exercises" "$class/cy"
cp "$root"/solutions/*.rs "$class/bob/exercises/"
cp "$root/solutions/causal_mask.rs" "$class/cy/"
echo 'pub fn causal_mask( this is not Rust' > "$class/cy/causal_mask.rs"

echo "[grading] building a student copy without solutions/ and grading three made-up students"
got=$("$root/scripts/grade-class.sh" "$class" --json)
echo "$got"
python3 - "$got" <<'PY'
import json, sys
rows = {r["student"]: r for r in map(json.loads, sys.argv[1].splitlines())}
names = ["causal_mask", "cross_attention", "decoder_layer", "sinusoidal_positions"]
expected = {"ada": ("not done", 0), "bob": ("passed", 4), "cy": ("does not compile", 0)}
problems = [
    f"{student}: expected {want} ({n} passed), got {rows.get(student)}"
    for student, (want, n) in expected.items()
    if student not in rows or rows[student]["passed"] != n or any(rows[student][e] != want for e in names)
]
if problems:
    sys.exit("[grading] FAILED\n" + "\n".join(problems))
print("[grading] 3 passed, 0 failed")
PY
