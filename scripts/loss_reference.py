"""Reference numbers for the label-smoothed loss (tests/training.rs reads them).

Computes, with PyTorch 2.13, the cross-entropy with label smoothing (`F.cross_entropy(...,
label_smoothing=eps, ignore_index=pad)`, which spreads eps over all classes) and the KL divergence from the
smoothed target `(1 - eps) * onehot + eps / V` to the prediction (`F.kl_div`), averaged over the
non-padding positions, for fixed logits and targets and three values of eps. Writes
tests/data/loss_reference.json. Run it in the reference virtualenv (scripts/reference-venv.sh):

    $(scripts/reference-venv.sh | tail -n 1) scripts/loss_reference.py
"""
import json
import math
import pathlib

import torch
import torch.nn.functional as F

BATCH, LENGTH, VOCAB, PAD = 2, 3, 6, 0
logits = [[[round(3 * math.sin(0.7 * (b * LENGTH + t) + 1.3 * v), 6) for v in range(VOCAB)]
           for t in range(LENGTH)] for b in range(BATCH)]
targets = [[4, 5, 2], [3, 2, PAD]]  # the last position of the second sequence is padding

x = torch.tensor(logits, dtype=torch.float64)
y = torch.tensor(targets)
log_probs = F.log_softmax(x, dim=-1)
keep = y.ne(PAD)
cases = []
for eps in [0.0, 0.1, 0.3]:
    ce = F.cross_entropy(x.view(-1, VOCAB), y.view(-1), ignore_index=PAD, label_smoothing=eps)
    smoothed = F.one_hot(y, VOCAB).double() * (1 - eps) + eps / VOCAB
    kl = F.kl_div(log_probs, smoothed, reduction="none").sum(-1)[keep].mean()
    cases.append({"epsilon": eps, "cross_entropy": ce.item(), "kl_divergence": kl.item()})

out = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "loss_reference.json"
out.write_text(json.dumps({"torch": torch.__version__, "pad_id": PAD, "logits": logits, "targets": targets,
                           "cases": cases}, indent=1) + "\n")
print(f"wrote {out}")
