#!/usr/bin/env python3
"""Makes a made-up class of 30 for the class report's picture (docs/instructors.md): each student
hands in the reference solutions with a few wrong answers from tests/exercise-mistakes/ in their place,
some mistakes far more common than others (as in a real class), a few leave exercises as the stub and one
hands in a file that does not compile. Seeded: the same class every time.

    scripts/demo-class.py DIR      # then: anatomy exercises grade DIR --report REPORT"""
import pathlib
import random
import shutil
import sys

root = pathlib.Path(__file__).resolve().parent.parent
out = pathlib.Path(sys.argv[1])
rng = random.Random(3)
# How likely each wrong answer is: a few that most classes make, the rest rare.
common = {"scaled_dot_product/no_scaling": 0.35, "layer_norm/unbiased_variance": 0.3,
          "mean_pooling/padding_averaged": 0.3, "cross_attention/queries_from_the_encoder": 0.25,
          "causal_mask/mask_after_softmax": 0.2, "split_heads/view_without_transpose": 0.2}
mistakes = sorted((root / "tests/exercise-mistakes").glob("*/*.rs"))
solutions = sorted((root / "solutions").glob("*.rs"))
for n in range(30):
    student = out / f"student{n + 1:02d}"
    student.mkdir(parents=True)
    for s in solutions:
        if rng.random() < 0.06 * (n % 4):  # some students stop early: the stub is graded
            continue
        shutil.copy(s, student / s.name)
    taken = set()
    for m in mistakes:
        key = f"{m.parent.name}/{m.stem}"
        if m.parent.name not in taken and rng.random() < common.get(key, 0.03):
            shutil.copy(m, student / f"{m.parent.name}.rs")
            taken.add(m.parent.name)
    if n == 7:
        (student / "feed_forward.rs").write_text("pub fn feed_forward(x: i64) -> i64 { x + \"1\" }\n")
print(f"wrote 30 students to {out}")
