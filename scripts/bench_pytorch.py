"""The PyTorch side of `make bench BENCH_PYTORCH=1`.

Times the same cases as `anatomy bench`, written the way the chapter writes them in PyTorch (a list of
attention heads, pre-layer-norm encoder layers), plus the fused variants (one packed query/key/value
projection, as ours runs without gradients; the chapter's softmax steps or libtorch's attention kernel), the
training steps and the decoding with and without a key/value cache (scripts/gpt_pytorch.py,
scripts/decode_pytorch.py), and prints the same JSON: {"results": [{"name", "batch", "seq", "median_s",
"host_s"}, ...]}. Same LibTorch version (2.13.0), same device, same thread count, evaluation in inference
mode as ours: the ratio measures only what sits between the LibTorch calls.

On a GPU (`--device cuda`) every timed run ends with torch.cuda.synchronize(), so that it counts the GPU's
work, and "host_s" is the time until the call returned, before that wait: the host's own part.

Usage: python scripts/bench_pytorch.py [--repeats N] [--quick] [--device cpu|cuda]   (prints the JSON report)
       python scripts/bench_pytorch.py --serve [--device cpu|cuda]                (what `anatomy bench --pytorch` runs)
"""
import argparse
import json
import math
import os
import sys
import time
import warnings

import torch
from torch import nn
import torch.nn.functional as F

# The peers of chapters 10 and 11, beside this script (Python puts a script's own folder on the path).
import decode_pytorch
import gpt_pytorch

HIDDEN, HEADS, LAYERS, INTERMEDIATE, VOCAB, MAX_POS = 768, 12, 12, 3072, 30522, 512
HEAD_DIM = HIDDEN // HEADS
# Where every module, input and timing runs: set from --device in main().
DEVICE = torch.device("cpu")


class Head(nn.Module):
    """One head: three projections, then softmax(q kᵀ / √d) v with bmm, as in the chapter."""

    def __init__(self):
        super().__init__()
        self.q, self.k, self.v = (nn.Linear(HIDDEN, HEAD_DIM) for _ in range(3))

    def forward(self, x):
        q, k, v = self.q(x), self.k(x), self.v(x)
        scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(q.size(-1))
        return torch.bmm(F.softmax(scores, dim=-1), v)


class PerHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleList(Head() for _ in range(HEADS))
        self.out = nn.Linear(HIDDEN, HIDDEN)

    def forward(self, x):
        return self.out(torch.cat([h(x) for h in self.heads], dim=-1))


class Fused(nn.Module):
    """Every head at once, with one packed projection for queries, keys and values (as nn.MultiheadAttention
    and nanoGPT hold them, and as ours runs them without gradients)."""

    def __init__(self, libtorch_kernel=False):
        super().__init__()
        self.qkv, self.out = nn.Linear(HIDDEN, 3 * HIDDEN), nn.Linear(HIDDEN, HIDDEN)
        self.libtorch_kernel = libtorch_kernel

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, HEADS, HEAD_DIM).permute(2, 0, 3, 1, 4)
        if self.libtorch_kernel:
            ctx = F.scaled_dot_product_attention(q, k, v)
        else:
            weights = F.softmax(q @ k.transpose(-2, -1) / math.sqrt(HEAD_DIM), dim=-1)
            ctx = weights @ v
        return self.out(ctx.transpose(1, 2).contiguous().view(b, s, HIDDEN))


class Layer(nn.Module):
    def __init__(self, pre_ln, attention):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(HIDDEN, eps=1e-12), nn.LayerNorm(HIDDEN, eps=1e-12)
        self.attn = attention
        self.ff1, self.ff2 = nn.Linear(HIDDEN, INTERMEDIATE), nn.Linear(INTERMEDIATE, HIDDEN)
        self.drop = nn.Dropout(0.1)
        self.pre_ln = pre_ln

    def ff(self, x):
        return self.drop(self.ff2(F.gelu(self.ff1(x))))

    def forward(self, x):
        if self.pre_ln:
            x = x + self.drop(self.attn(self.ln1(x)))
            return x + self.ff(self.ln2(x))
        x = self.ln1(x + self.drop(self.attn(x)))
        return self.ln2(x + self.ff(x))


class Encoder(nn.Module):
    def __init__(self, book):
        super().__init__()
        self.tok, self.pos = nn.Embedding(VOCAB, HIDDEN), nn.Embedding(MAX_POS, HIDDEN)
        self.ln, self.drop = nn.LayerNorm(HIDDEN, eps=1e-12), nn.Dropout(0.1)
        # Like ours, BERT's fused attention runs libtorch's kernel when no one asks for the weights.
        self.layers = nn.ModuleList(Layer(book, PerHead() if book else Fused(True)) for _ in range(LAYERS))

    def forward(self, ids):
        # The book makes the positions with no device (so on the CPU), which fails on a GPU: here they are
        # made where the ids are, as ours are.
        pos = torch.arange(ids.size(1), device=ids.device).unsqueeze(0)
        x = self.drop(self.ln(self.tok(ids) + self.pos(pos)))
        for layer in self.layers:
            x = layer(x)
        return x


class Seq2Seq(nn.Module):
    """The chapter-10 copy model in PyTorch's own nn.Transformer: 4 heads, 2 + 2 pre-LN layers,
    d_ff 4 * d_model, dropout 0.1, embeddings scaled by sqrt(d_model) plus sinusoidal positions, a
    linear generator and log-softmax; the sizes of `anatomy train --task copy --d-model D`."""

    VOCAB, MAX_LEN, PAD = 14, 12, 0

    def __init__(self, d_model):
        super().__init__()
        d = self.D_MODEL = d_model
        self.src_embed, self.tgt_embed = nn.Embedding(self.VOCAB, d), nn.Embedding(self.VOCAB, d)
        position = torch.arange(self.MAX_LEN).unsqueeze(1)
        frequency = torch.exp(torch.arange(0, d, 2) * (-math.log(10000.0) / d))
        pe = torch.zeros(self.MAX_LEN, d)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(position * frequency), torch.cos(position * frequency)
        self.register_buffer("pe", pe)
        with warnings.catch_warnings():  # "nested tensors are off with norm_first": true, and irrelevant here
            warnings.simplefilter("ignore")
            self.transformer = nn.Transformer(d, 4, 2, 2, 4 * d, 0.1, batch_first=True, norm_first=True)
        self.generator = nn.Linear(d, self.VOCAB)
        self.drop = nn.Dropout(0.1)

    def embed(self, table, ids):
        return self.drop(table(ids) * math.sqrt(self.D_MODEL) + self.pe[: ids.size(1)])

    def forward(self, src, tgt):
        t = tgt.size(1)
        causal = torch.triu(torch.ones(t, t, dtype=torch.bool, device=src.device), diagonal=1)  # True = blocked, as PyTorch reads it
        h = self.transformer(
            self.embed(self.src_embed, src), self.embed(self.tgt_embed, tgt), tgt_mask=causal,
            src_key_padding_mask=src.eq(self.PAD), tgt_key_padding_mask=tgt.eq(self.PAD),
            memory_key_padding_mask=src.eq(self.PAD))
        return F.log_softmax(self.generator(h), dim=-1)


class TrainStep:
    """One optimizer step on a batch of 64 copy pairs of length 10, as `anatomy bench` times it."""

    def __init__(self, batch, d_model):
        torch.manual_seed(0)
        self.model = Seq2Seq(d_model).to(DEVICE).train()
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-3, betas=(0.9, 0.98), eps=1e-9)
        digits = torch.randint(4, 14, (batch, 10))
        self.src = digits.to(DEVICE)
        self.tgt_in = torch.cat([torch.full((batch, 1), 1), digits], dim=1).to(DEVICE)
        self.tgt_out = torch.cat([digits, torch.full((batch, 1), 2)], dim=1).to(DEVICE)

    def __call__(self):
        log_probs = self.model(self.src, self.tgt_in)
        loss = F.nll_loss(log_probs.view(-1, Seq2Seq.VOCAB), self.tgt_out.view(-1), ignore_index=Seq2Seq.PAD)
        smooth = -log_probs.mean(-1)[self.tgt_out.ne(Seq2Seq.PAD)].mean()
        loss = 0.9 * loss + 0.1 * smooth  # = cross_entropy(label_smoothing=0.1), as ours computes it
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss


def synchronize():
    """Waits for the GPU's queued work (on the CPU there is none to wait for)."""
    if DEVICE.type == "cuda":
        torch.cuda.synchronize(DEVICE)


def timed(f):
    """One run: (seconds until `f` returned, seconds until its work was done)."""
    start = time.perf_counter()
    f()
    host = time.perf_counter() - start
    synchronize()
    return host, time.perf_counter() - start


def median(xs):
    return sorted(xs)[len(xs) // 2]


def median_seconds(repeats, f):
    """The median of `repeats` runs after two to warm up: {"median_s", "host_s"}."""
    for _ in range(2):
        f()
    synchronize()
    runs = [timed(f) for _ in range(max(repeats, 1))]
    return {"median_s": median([total for _, total in runs]), "host_s": median([host for host, _ in runs])}


class Cases:
    """Builds each module once and times a case on request."""

    def __init__(self):
        torch.manual_seed(0)
        self.attention = {
            "mha_per_head": PerHead().to(DEVICE).eval(),
            "mha_fused": Fused().to(DEVICE).eval(),
            "mha_libtorch_sdpa": Fused(True).to(DEVICE).eval(),
        }
        self.encoders = {
            "encoder_bert_base_book": Encoder(True).to(DEVICE).eval(),
            "encoder_bert_base_bert": Encoder(False).to(DEVICE).eval(),
        }
        self.inputs = {}
        self.built = {}

    def build(self, key, make):
        """The object under `key`, made by `make()` on first use only."""
        if key not in self.built:
            self.built[key] = make()
        return self.built[key]

    def decode_pairs(self, name, steps, pairs):
        """Chapter 10's decoding (scripts/decode_pytorch.py) at the bench's sizes, "decode_d64" or
        "decode_d512": `pairs` runs of `steps` steps with the key/value cache, each followed by one without,
        as `anatomy bench` times its own."""
        d_model = int(name.removeprefix("decode_d"))
        decoding = self.build(name, lambda: decode_pytorch.Decoding(d_model, DEVICE))
        cached, recomputed = decoding.pairs(pairs, steps)
        return {"cached_s": cached, "recompute_s": recomputed}

    def minilm(self, name, batch, seq, repeats):
        """Chapter 12's peer: Hugging Face's BertModel with the local MiniLM weights, reading a batch
        (inference mode), or fine-tuned one step with a linear head on the mean-pooled state (dropout
        0.1, gradients clipped at 1, PyTorch's fused AdamW), as `anatomy bench` times ours."""
        from transformers import AutoModel
        model_dir = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "models", "all-MiniLM-L6-v2")
        torch.manual_seed(0)
        ids = self.inputs.setdefault(("minilm", batch, seq), torch.randint(30522, (batch, seq)).to(DEVICE))
        mask = torch.ones_like(ids)
        if name == "classify_features_minilm":
            body = self.build("minilm_eval", lambda: AutoModel.from_pretrained(model_dir).to(DEVICE).eval())
            with torch.inference_mode():
                return median_seconds(repeats, lambda: body(input_ids=ids, attention_mask=mask).last_hidden_state)
        model = self.build("minilm_train", lambda: AutoModel.from_pretrained(model_dir).to(DEVICE).train())
        head = self.build("minilm_head", lambda: torch.nn.Linear(model.config.hidden_size, 2).to(DEVICE))
        params = list(model.parameters()) + list(head.parameters())
        optimizer = self.build("minilm_adamw", lambda: torch.optim.AdamW(params, lr=5e-5, weight_decay=0.01, fused=True))
        labels = (torch.arange(batch) % 2).to(DEVICE)

        def step():
            hidden = model(input_ids=ids, attention_mask=mask).last_hidden_state
            pooled = (hidden * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True).clamp(min=1e-9)
            loss = F.cross_entropy(head(F.dropout(pooled, 0.1, True)), labels)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            optimizer.step()
            return loss
        return median_seconds(repeats, step)

    def time(self, name, batch, seq, repeats):
        if name in ("classify_features_minilm", "train_step_classify_minilm"):
            return self.minilm(name, batch, seq, repeats)
        if name == "train_step_gpt":
            # Chapter 11's peer (scripts/gpt_pytorch.py): one step of the nanoGPT-style model on Moby-Dick.
            trainer = self.build("gpt", lambda: gpt_pytorch.Trainer(gpt_pytorch.default_text(), device=DEVICE))
            counter = iter(range(1, 10**9))
            return median_seconds(repeats, lambda: trainer.step(next(counter), 2000))
        if name.startswith("train_step_copy_d"):
            d_model = int(name.removeprefix("train_step_copy_d"))
            step = self.build((batch, d_model), lambda: TrainStep(batch, d_model))
            return median_seconds(repeats, step)
        with torch.inference_mode():
            if name in self.attention:
                x = self.inputs.setdefault((batch, seq), torch.randn(batch, seq, HIDDEN).to(DEVICE))
                module = self.attention[name]
                return median_seconds(repeats, lambda: module(x))
            ids = self.inputs.setdefault(("ids", batch, seq), torch.randint(VOCAB, (batch, seq)).to(DEVICE))
            encoder = self.encoders[name]
            return median_seconds(repeats, lambda: encoder(ids))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--serve", action="store_true", help="answer one JSON request per stdin line (used by `anatomy bench --pytorch`)")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N: where every case runs")
    args = parser.parse_args()
    global DEVICE
    DEVICE = torch.device(args.device)
    if DEVICE.type == "cuda" and not torch.cuda.is_available():
        sys.exit(f"--device {args.device}, but this PyTorch sees no GPU")
    cases = Cases()
    if args.serve:
        for line in sys.stdin:
            request = json.loads(line)
            try:
                if "pairs" in request:
                    reply = cases.decode_pairs(request["name"], request["seq"], request["pairs"])
                else:
                    reply = cases.time(request["name"], request["batch"], request["seq"], request["repeats"])
            except Exception as e:  # report, keep serving
                reply = {"error": repr(e)}
            print(json.dumps(reply), flush=True)
        return
    results = []
    batches, seqs = ([1], [5]) if args.quick else ([1, 8], [5, 128, 512])
    for batch in batches:
        for seq in seqs:
            for name in cases.attention:
                results.append({"name": name, "batch": batch, "seq": seq, **cases.time(name, batch, seq, args.repeats)})
    seq = 5 if args.quick else 128
    for name in cases.encoders:
        results.append({"name": name, "batch": 1, "seq": seq, **cases.time(name, 1, seq, args.repeats)})
    report = {"torch": torch.__version__, "device": str(DEVICE), "threads": torch.get_num_threads(), "results": results}
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
