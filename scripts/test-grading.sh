#!/usr/bin/env bash
# Part of `make test`: grading a made-up class of 30 gives the right table, and a broken exercise file
# breaks nothing but its own grade.
#
# The class: ada hands in nothing (every exercise is the untouched stub); bob every reference solution;
# cy the solutions, but a causal_mask.rs with a type error; dee the solutions with two wrong answers from
# tests/exercise-mistakes/; 26 more students copy bob, cy or ada in turn (a class is mostly repeats).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
work=$(mktemp -d)
touched=0
# Puts the learner's own exercises/causal_mask.rs and progress back as they were.
restore() {
  if [[ $touched == 1 ]]; then
    for f in causal_mask.rs .progress.json; do
      if [[ -f $work/saved/$f ]]; then cp "$work/saved/$f" "exercises/$f"; else rm -f "exercises/$f"; fi
    done
  fi
  rm -rf "$work"
}
trap restore EXIT

class="$work/class"
mkdir -p "$class/ada" "$class/bob/exercises" "$class/cy" "$class/dee"
cp solutions/*.rs "$class/bob/exercises/"
cp solutions/*.rs "$class/cy/"
printf 'use tch::{Device, Tensor};\npub fn causal_mask(n: i64, device: Device) -> Tensor {\n    let n: i64 = "seven";\n    todo!()\n}\npub fn masked_softmax(s: &Tensor, m: &Tensor) -> Tensor { todo!() }\n' \
  >"$class/cy/causal_mask.rs"
cp solutions/*.rs "$class/dee/"
cp tests/exercise-mistakes/split_heads/view_without_transpose.rs "$class/dee/split_heads.rs"
cp tests/exercise-mistakes/layer_norm/unbiased_variance.rs "$class/dee/layer_norm.rs"
for i in $(seq 1 26); do
  case $((i % 3)) in 0) src=bob ;; 1) src=cy ;; 2) src=ada ;; esac
  cp -r "$class/$src" "$class/student$(printf %02d "$i")-$src"
done

cargo build --quiet --bin anatomy
echo "[grading] grading a class of $(ls "$class" | wc -l) students"
started=$(date +%s.%N)
target/debug/anatomy exercises grade "$class" --json --csv "$work/grades.csv" --report "$work/report" >"$work/grades.jsonl"
seconds=$(python3 -c "import time; print(f'{time.time() - $started:.1f}')")
echo "[grading] graded in $seconds s"
python3 - "$work/grades.jsonl" <<'PY'
import json, sys
rows = {r["student"]: r for r in map(json.loads, open(sys.argv[1]))}
fields = ("student", "passed", "total", "messages", "mistakes", "parts", "points", "total_points", "max_points", "sandbox", "sandbox_tier")
names = [k for k in rows["ada"] if k not in fields]
assert len(names) >= 12, names
def expect(student, passed, special=None):
    special = special or {}
    r = rows[student]
    problems = []
    for n in names:
        want = special.get(n, "passed" if passed == len(names) - len(special) else "not done")
        if r[n] != want:
            problems.append(f"{student}/{n}: expected {want!r}, got {r[n]!r} ({r['messages'].get(n, '')[:300]})")
    if r["passed"] != passed:
        problems.append(f"{student}: expected {passed} passed, got {r['passed']}")
    return problems
n = len(names)
problems = expect("ada", 0)
problems += expect("bob", n)
problems += expect("cy", n - 1, {"causal_mask": "does not compile"})
problems += expect("dee", n - 2, {"split_heads": "failed", "layer_norm": "failed"})
for student in rows:
    for base in ("ada", "bob", "cy"):
        if student.endswith("-" + base):
            grades = lambda r: {k: v for k, v in r.items() if k not in ("student", "messages")}
            if grades(rows[student]) != grades(rows[base]):
                problems.append(f"{student} should be graded as {base}")
cy = rows["cy"]["messages"]["causal_mask"]
if "error[E0308]" not in cy or "causal_mask.rs:3:" not in cy:
    problems.append(f"cy's causal_mask message should be the compiler's first error with its line: {cy}")
if "without transpose" not in rows["dee"]["messages"]["split_heads"]:
    problems.append("dee's split_heads message should name the mistake: " + rows["dee"]["messages"]["split_heads"])
if any(r["sandbox_tier"] != "bubblewrap" for r in rows.values()):
    problems.append("every student should be graded in the bubblewrap tier here")
if len(rows) != 30:
    problems.append(f"expected 30 students, got {len(rows)}")
if problems:
    sys.exit("[grading] FAILED\n" + "\n".join(problems))
print(f"[grading] table right for {len(rows)} students x {n} exercises")
PY

# The class report agrees with the JSON lines and the CSV, and is made again the same from the JSON lines.
target/debug/anatomy exercises report "$work/grades.jsonl" --out "$work/report-again" 2>/dev/null
python3 - "$work" <<'PY'
import collections, csv, json, sys
work = sys.argv[1]
rows = [json.loads(l) for l in open(f"{work}/grades.jsonl")]
summary = json.load(open(f"{work}/report/summary.json"))
problems = []
for s in summary["statuses"]:
    for key, words in (("passed", "passed"), ("failed", "failed"), ("does_not_compile", "does not compile"), ("not_done", "not done")):
        n = sum(r[s["exercise"]] == words for r in rows)
        if s[key] != n:
            problems.append(f"{s['exercise']} {key}: summary {s[key]}, JSON lines {n}")
counted = collections.Counter({(m["exercise"], m["mistake"]): m["students"] for m in summary["mistakes"] + summary["stops"]})
from_lines = collections.Counter((e, i) for r in rows for e, i in r["mistakes"].items())
notes = [n for r in csv.DictReader(open(f"{work}/grades.csv")) for n in r["notes"].split("; ") if n]
from_csv = collections.Counter(tuple(n.split(": ", 1)) for n in notes)
if counted != from_lines or counted != from_csv:
    problems.append(f"mistakes: summary {dict(counted)}, JSON lines {dict(from_lines)}, CSV {dict(from_csv)}")
# ada's 9 copies and ada: every exercise not done; cy and its 9 copies: causal_mask does not compile; dee's two.
want = {("causal_mask", "does_not_compile"): 10, ("split_heads", "view_without_transpose"): 1, ("layer_norm", "unbiased_variance"): 1}
if counted != want:
    problems.append(f"mistakes: expected {want}, got {dict(counted)}")
for name in ("summary.json", "index.html"):
    if open(f"{work}/report/{name}").read() != open(f"{work}/report-again/{name}").read():
        problems.append(f"{name} made again from the JSON lines differs")
if problems:
    sys.exit("[grading] FAILED: the class report\n" + "\n".join(problems))
print(f"[grading] the class report counts {sum(counted.values())} mistakes as the JSON lines and the CSV do, and is made again the same")
PY

# A type error in the learner's own exercise file: the crate, the CLI and the other exercises still work.
mkdir -p "$work/saved"
for f in causal_mask.rs .progress.json; do if [[ -f exercises/$f ]]; then cp "exercises/$f" "$work/saved/$f"; fi; done
touched=1
printf 'pub fn causal_mask(n: i64) -> i64 { n + "1" }\n' >exercises/causal_mask.rs
cargo build --quiet --bin anatomy
out=$(target/debug/anatomy exercises check causal_mask || true)
grep -q 'does not compile' <<<"$out" || { echo "[grading] FAILED: a broken file was not reported: $out"; exit 1; }
grep -q 'causal_mask.rs:1:' <<<"$out" || { echo "[grading] FAILED: no file and line in: $out"; exit 1; }
target/debug/anatomy exercises check --solutions >/dev/null
target/debug/anatomy tokenize "still works" >/dev/null
echo "[grading] a broken exercises/causal_mask.rs left cargo build, the CLI and the solutions' grading working"
