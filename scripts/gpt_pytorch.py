"""The PyTorch peer of `anatomy gpt train` (chapter 11), for `anatomy bench --pytorch` and for comparing
what the two learn: a nanoGPT-style character model with the same sizes (4 layers, 4 heads, width 128,
context 64, batch 12, no dropout) and GPT-2's tanh GELU, the same text and split (the first 90 % trains,
the last 10 % is held out), the same optimiser and schedule (AdamW, betas 0.9/0.99, weight decay 0.1 on
every parameter as tch applies it, 100 warm-up steps then a cosine to lr/10, gradients clipped at norm 1)
and the same evaluation (mean cross-entropy over every non-overlapping block of the held-out part).

Usage: python scripts/gpt_pytorch.py [--text FILE] [--steps N] [--seed S]
Prints {"seconds", "steps": [{"step", "loss", "lr"}, ...], "eval": {"val_loss"}} like `--json`.
Run in the reference virtualenv (scripts/reference-venv.sh); never a test dependency.
"""
import argparse
import json
import math
import os
import time

import torch
from torch import nn
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.heads = heads

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        split = lambda z: z.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        y = F.scaled_dot_product_attention(split(q), split(k), split(v), is_causal=True)
        x = x + self.proj(y.transpose(1, 2).contiguous().view(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))  # GPT-2's GELU, as ours


class Gpt(nn.Module):
    def __init__(self, vocab, layers=4, heads=4, d=128, context=64):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(context, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.apply(self._init)
        for name, p in self.named_parameters():
            if name.endswith("proj.weight") or name.endswith("out.weight"):
                nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * layers))

    @staticmethod
    def _init(m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, 0.0, 0.02)
        if isinstance(m, nn.Linear):
            nn.init.zeros_(m.bias)

    def forward(self, ids):
        x = self.tok(ids) + self.pos(torch.arange(ids.size(1), device=ids.device))
        for block in self.blocks:
            x = block(x)
        return self.ln(x) @ self.tok.weight.t()  # the head tied to the token embedding


def default_text():
    return os.path.join(ROOT, ".deps", "text", "moby-dick.txt")


def learning_rate(step, steps, lr, warmup):
    if step <= warmup:
        return lr * step / max(warmup, 1)
    progress = min((step - warmup) / max(steps - warmup, 1), 1.0)
    return lr / 10 + 0.5 * (1 + math.cos(math.pi * progress)) * (lr - lr / 10)


class Trainer:
    """One training run's state, so that `anatomy bench --pytorch` can time single steps."""

    def __init__(self, text, seed=1337, context=64, batch=12, lr=1e-3, device=torch.device("cpu")):
        data = open(text, encoding="utf-8").read()
        self.chars = sorted(set(data))
        index = {c: i for i, c in enumerate(self.chars)}
        ids = torch.tensor([index[c] for c in data], dtype=torch.long)
        split = len(ids) * 9 // 10
        self.train, self.val = ids[:split], ids[split:]
        self.context, self.batch, self.lr, self.device = context, batch, lr, device
        torch.manual_seed(seed)
        self.model = Gpt(len(self.chars), context=context).to(device)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=lr, betas=(0.9, 0.99), weight_decay=0.1, eps=1e-8)

    def step(self, step, steps, warmup=100):
        lr = learning_rate(step, steps, self.lr, warmup)
        for group in self.opt.param_groups:
            group["lr"] = lr
        starts = torch.randint(len(self.train) - self.context - 1, (self.batch, 1))
        rows = self.train[starts + torch.arange(self.context + 1)]
        x, y = rows[:, :-1].to(self.device), rows[:, 1:].to(self.device)
        logits = self.model(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
        self.opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.opt.step()
        return loss.item(), lr

    @torch.no_grad()
    def val_loss(self):
        n = (len(self.val) - 1) // self.context
        x = self.val[: n * self.context].view(n, self.context)
        y = self.val[1 : n * self.context + 1].view(n, self.context)
        total = 0.0
        for s in range(0, n, 64):
            logits = self.model(x[s : s + 64].to(self.device))
            targets = y[s : s + 64].reshape(-1).to(self.device)
            total += F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets, reduction="sum").item()
        return total / (n * self.context)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--text", default=default_text())
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1337)
    args = parser.parse_args()
    trainer = Trainer(args.text, args.seed)
    began = time.perf_counter()
    steps = []
    for step in range(1, args.steps + 1):
        loss, lr = trainer.step(step, args.steps)
        steps.append({"step": step, "loss": loss, "lr": lr})
    seconds = time.perf_counter() - began
    print(json.dumps({"seconds": seconds, "steps": steps, "eval": {"val_loss": trainer.val_loss()}}))


if __name__ == "__main__":
    main()
