"""What the key/value cache buys in PyTorch at the sizes of `anatomy bench`'s decode_* cases, for
comparison with ours. The copy model's shape by default (d_model 64, 4 heads, 2 + 2 pre-LN layers,
feed-forward 4 × d_model, 14 tokens; `--d-model 512` gives the bench's d512 case: 8 heads, 6 + 6
layers), a source of 10 tokens (a copy example), 64 decoding steps of fixed tokens at batch 1, in
inference mode, with and without a cache of the self-attention's keys and values and the source's (the
same structure as our decoder layer: one packed projection for the self-attention's queries, keys and
values and one for the source's keys and values, as ours runs them without gradients, libtorch's attention
kernel, the final LayerNorm over every position before the last one is read). `--device cuda` runs it on
a GPU, each run ending with torch.cuda.synchronize(). The two variants alternate run by
run and the speed-up is the median of the pairs' ratios, as in the bench. Random weights: both write the
same tokens (checked). `anatomy bench --pytorch` times the same thing through `scripts/bench_pytorch.py`,
interleaved with ours. Run in the reference virtualenv (scripts/reference-venv.sh); never a test
dependency.

Usage: python scripts/decode_pytorch.py [--pairs N] [--d-model 64|512] [--device cpu|cuda]
Prints {"cached_ms", "recompute_ms", "ratio", "pairs", "threads"}.
"""
import argparse
import json
import math
import statistics
import time

import torch
from torch import nn
import torch.nn.functional as F

VOCAB, SOURCE_LEN, MAX_LEN = 14, 10, 80
# The bench's two decoding sizes: (heads, layers) for each d_model; the feed-forward is 4 × d_model.
SIZES = {64: (4, 2), 512: (8, 6)}


class Attention(nn.Module):
    """Queries, keys and values from one packed projection (rows: query, key, value)."""

    def __init__(self, d, heads):
        super().__init__()
        self.d, self.heads = d, heads
        self.qkv, self.output = nn.Linear(d, 3 * d), nn.Linear(d, d)

    def split(self, t, parts):
        b, n, _ = t.shape
        return t.view(b, n, parts, self.heads, self.d // self.heads).permute(2, 0, 3, 1, 4)

    def queries_keys_values(self, x):
        return self.split(self.qkv(x), 3)

    def keys_and_values(self, x):
        d = self.d
        return self.split(F.linear(x, self.qkv.weight[d:], self.qkv.bias[d:]), 2)

    def query(self, x):
        d = self.d
        return self.split(F.linear(x, self.qkv.weight[:d], self.qkv.bias[:d]), 1)[0]

    def attend(self, q, keys, values, mask=None):
        context = F.scaled_dot_product_attention(q, keys, values, attn_mask=mask)
        b, _, n, _ = context.shape
        return self.output(context.transpose(1, 2).contiguous().view(b, n, self.d))


class EncoderLayer(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.attention, self.ln1, self.ln2 = Attention(d, heads), nn.LayerNorm(d), nn.LayerNorm(d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attention.attend(*self.attention.queries_keys_values(h))
        return x + self.out(F.relu(self.fc(self.ln2(x))))


class DecoderLayer(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.self_attention, self.cross_attention = Attention(d, heads), Attention(d, heads)
        self.ln1, self.ln2, self.ln3 = (nn.LayerNorm(d) for _ in range(3))
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x, memory, mask, cache):
        h = self.ln1(x)
        q, keys, values = self.self_attention.queries_keys_values(h)
        if cache is not None:  # the newest position's keys and values join those written before
            if "keys" in cache:
                keys, values = torch.cat([cache["keys"], keys], 2), torch.cat([cache["values"], values], 2)
            cache["keys"], cache["values"] = keys, values
        x = x + self.self_attention.attend(q, keys, values, mask)
        h = self.ln2(x)
        if cache is None:
            source = self.cross_attention.keys_and_values(memory)
        else:  # the source's keys and values, computed at the first step only
            if "source" not in cache:
                cache["source"] = self.cross_attention.keys_and_values(memory)
            source = cache["source"]
        x = x + self.cross_attention.attend(self.cross_attention.query(h), *source)
        return x + self.out(F.relu(self.fc(self.ln3(x))))


class Model(nn.Module):
    def __init__(self, d):
        super().__init__()
        heads, layers = SIZES[d]
        self.d = d
        self.source_embedding, self.target_embedding = nn.Embedding(VOCAB, d), nn.Embedding(VOCAB, d)
        position = torch.arange(MAX_LEN).unsqueeze(1)
        frequency = torch.exp(torch.arange(0, d, 2) * (-math.log(10000.0) / d))
        pe = torch.zeros(MAX_LEN, d)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(position * frequency), torch.cos(position * frequency)
        self.register_buffer("pe", pe)
        self.encoder = nn.ModuleList(EncoderLayer(d, heads) for _ in range(layers))
        self.decoder = nn.ModuleList(DecoderLayer(d, heads) for _ in range(layers))
        self.encoder_ln, self.decoder_ln, self.generator = nn.LayerNorm(d), nn.LayerNorm(d), nn.Linear(d, VOCAB)

    def embed(self, table, ids, first):
        return table(ids) * math.sqrt(self.d) + self.pe[first : first + ids.shape[1]]

    def encode(self, source):
        x = self.embed(self.source_embedding, source, 0)
        for layer in self.encoder:
            x = layer(x)
        return self.encoder_ln(x)


class Decoding:
    """A model of one of the bench's sizes, a source, and `run(use_cache, steps)`."""

    def __init__(self, d_model, device=torch.device("cpu")):
        torch.manual_seed(0)
        self.device = device
        self.model = Model(d_model).to(device).eval()
        self.source = torch.randint(4, VOCAB, (1, SOURCE_LEN)).to(device)
        assert torch.equal(self.run(True, 64), self.run(False, 64)), "the cache must not change the tokens"

    def run(self, use_cache, steps):
        """`steps` steps, each writing a fixed token (digits in turn), as the bench's decoder does."""
        model = self.model
        with torch.inference_mode():
            memory = model.encode(self.source)
            written = torch.full((1, 1), 1, dtype=torch.long, device=self.device)
            caches = [{} for _ in model.decoder] if use_cache else [None] * len(model.decoder)
            for i in range(steps):
                t = written.shape[1]
                if use_cache:  # only the newest token, at position t - 1; its one query may see everything
                    ids, first, mask = written[:, t - 1 :], t - 1, None
                else:
                    ids, first, mask = written, 0, torch.ones(t, t, dtype=torch.bool, device=self.device).tril()
                x = model.embed(model.target_embedding, ids, first)
                for layer, cache in zip(model.decoder, caches):
                    x = layer(x, memory, mask, cache)
                F.log_softmax(model.generator(model.decoder_ln(x)[:, -1:]), -1)
                written = torch.cat([written, torch.tensor([[4 + i % 10]], device=self.device)], 1)
        return written

    def pairs(self, n, steps):
        """`n` pairs, cached then recomputing, back to back: ([cached seconds], [recomputing seconds])."""
        for _ in range(2):
            self.run(True, steps)
            self.run(False, steps)
        cached, recomputed = [], []
        for _ in range(n):
            cached.append(self.seconds(True, steps))
            recomputed.append(self.seconds(False, steps))
        return cached, recomputed

    def seconds(self, use_cache, steps):
        """One timed run, until the device's work is done."""
        start = time.perf_counter()
        self.run(use_cache, steps)
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=30)
    parser.add_argument("--d-model", type=int, choices=sorted(SIZES), default=64)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    cached, recomputed = Decoding(args.d_model, torch.device(args.device)).pairs(args.pairs, 64)
    print(json.dumps({
        "cached_ms": statistics.median(cached) * 1e3,
        "recompute_ms": statistics.median(recomputed) * 1e3,
        "ratio": statistics.median(r / c for c, r in zip(cached, recomputed)),
        "pairs": args.pairs,
        "threads": torch.get_num_threads(),
    }))


if __name__ == "__main__":
    main()
