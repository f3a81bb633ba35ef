"""What the key/value cache buys in PyTorch at the sizes of `anatomy bench`'s decode_*_d64 case, for
comparison with ours: the copy model's shape (d_model 64, 4 heads, 2 + 2 pre-LN layers, feed-forward 256,
14 tokens), a source of 10 tokens (a copy example), 64 decoding steps of fixed tokens at batch 1, in
inference mode, with and without a cache of the self-attention's keys and values and the source's (the
same structure as our decoder layer: separate query/key/value projections, libtorch's attention kernel).
The two variants alternate run by run and the speed-up is the median of the pairs' ratios, as in the
bench. Random weights: both write the same tokens (checked). Run in the reference virtualenv
(scripts/reference-venv.sh); never a test dependency.

Usage: python scripts/decode_pytorch.py [--pairs N]
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
torch.manual_seed(0)
D, HEADS, LAYERS, FF, VOCAB = 64, 4, 2, 256, 14


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.query, self.key, self.value, self.output = (nn.Linear(D, D) for _ in range(4))

    def split(self, t):
        b, n, _ = t.shape
        return t.view(b, n, HEADS, D // HEADS).transpose(1, 2)

    def keys_and_values(self, x):
        return self.split(self.key(x)), self.split(self.value(x))

    def attend(self, x, keys, values, mask=None):
        context = F.scaled_dot_product_attention(self.split(self.query(x)), keys, values, attn_mask=mask)
        b, _, n, _ = context.shape
        return self.output(context.transpose(1, 2).contiguous().view(b, n, D))


class EncoderLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention, self.ln1, self.ln2 = Attention(), nn.LayerNorm(D), nn.LayerNorm(D)
        self.fc, self.out = nn.Linear(D, FF), nn.Linear(FF, D)

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attention.attend(h, *self.attention.keys_and_values(h))
        return x + self.out(F.relu(self.fc(self.ln2(x))))


class DecoderLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.self_attention, self.cross_attention = Attention(), Attention()
        self.ln1, self.ln2, self.ln3 = (nn.LayerNorm(D) for _ in range(3))
        self.fc, self.out = nn.Linear(D, FF), nn.Linear(FF, D)

    def forward(self, x, memory, mask, cache):
        h = self.ln1(x)
        keys, values = self.self_attention.keys_and_values(h)
        if cache is not None:  # the newest position's keys and values join those written before
            if "keys" in cache:
                keys, values = torch.cat([cache["keys"], keys], 2), torch.cat([cache["values"], values], 2)
            cache["keys"], cache["values"] = keys, values
        x = x + self.self_attention.attend(h, keys, values, mask)
        h = self.ln2(x)
        if cache is None:
            source = self.cross_attention.keys_and_values(memory)
        else:  # the source's keys and values, computed at the first step only
            if "source" not in cache:
                cache["source"] = self.cross_attention.keys_and_values(memory)
            source = cache["source"]
        x = x + self.cross_attention.attend(h, *source)
        return x + self.out(F.relu(self.fc(self.ln3(x))))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.source_embedding, self.target_embedding = nn.Embedding(VOCAB, D), nn.Embedding(VOCAB, D)
        position = torch.arange(80).unsqueeze(1)
        frequency = torch.exp(torch.arange(0, D, 2) * (-math.log(10000.0) / D))
        pe = torch.zeros(80, D)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(position * frequency), torch.cos(position * frequency)
        self.register_buffer("pe", pe)
        self.encoder = nn.ModuleList(EncoderLayer() for _ in range(LAYERS))
        self.decoder = nn.ModuleList(DecoderLayer() for _ in range(LAYERS))
        self.encoder_ln, self.decoder_ln, self.generator = nn.LayerNorm(D), nn.LayerNorm(D), nn.Linear(D, VOCAB)

    def embed(self, table, ids, first):
        return table(ids) * math.sqrt(D) + self.pe[first : first + ids.shape[1]]

    def encode(self, source):
        x = self.embed(self.source_embedding, source, 0)
        for layer in self.encoder:
            x = layer(x)
        return self.encoder_ln(x)


model = Model().eval()
source = torch.randint(4, VOCAB, (1, 10))


def decode(use_cache):
    """64 steps, each writing a fixed token (digits in turn), as the bench's decoder does."""
    with torch.inference_mode():
        memory = model.encode(source)
        written = torch.full((1, 1), 1, dtype=torch.long)
        caches = [{} for _ in range(LAYERS)] if use_cache else [None] * LAYERS
        for i in range(64):
            t = written.shape[1]
            if use_cache:  # only the newest token, at position t - 1; its one query may see everything
                ids, first, mask = written[:, t - 1 :], t - 1, None
            else:
                ids, first, mask = written, 0, torch.ones(t, t, dtype=torch.bool).tril()
            x = model.embed(model.target_embedding, ids, first)
            for layer, cache in zip(model.decoder, caches):
                x = layer(x, memory, mask, cache)
            F.log_softmax(model.generator(model.decoder_ln(x[:, -1:])), -1)
            written = torch.cat([written, torch.tensor([[4 + i % 10]])], 1)
    return written


assert torch.equal(decode(True), decode(False)), "the cache must not change the tokens"
for _ in range(3):
    decode(True)
    decode(False)

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=30)
    args = parser.parse_args()
    cached, recomputed, ratios = [], [], []
    for _ in range(args.pairs):
        start = time.perf_counter()
        decode(True)
        c = time.perf_counter() - start
        start = time.perf_counter()
        decode(False)
        r = time.perf_counter() - start
        cached.append(c)
        recomputed.append(r)
        ratios.append(r / c)
    print(json.dumps({
        "cached_ms": statistics.median(cached) * 1e3,
        "recompute_ms": statistics.median(recomputed) * 1e3,
        "ratio": statistics.median(ratios),
        "pairs": args.pairs,
        "threads": torch.get_num_threads(),
    }))


if __name__ == "__main__":
    main()
