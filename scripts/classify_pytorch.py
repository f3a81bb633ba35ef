"""Chapter 12's peer: the same spam filter in PyTorch and Hugging Face Transformers, and the baseline a user
would pick instead (word counts and logistic regression, scikit-learn), on the same split.

Reference numbers only (no test depends on this). Run it with the reference virtualenv, after
`cargo anatomy classify prepare` wrote the examples:

    .deps/venv-ref/bin/pip install scikit-learn            # once
    .deps/venv-ref/bin/python scripts/classify_pytorch.py frozen      # both poolings, the head as ours
    .deps/venv-ref/bin/python scripts/classify_pytorch.py baseline    # word counts + logistic regression
    .deps/venv-ref/bin/python scripts/classify_pytorch.py fine-tune --steps 148   # one epoch, as ours stops
    .deps/venv-ref/bin/python scripts/classify_pytorch.py reference   # tests/data/spam_pooling_reference.json
    .deps/venv-ref/bin/python scripts/classify_pytorch.py step-reference  # tests/data/spam_step_reference.json

It reads .deps/spam-assassin/examples.jsonl (the split `anatomy classify` reads) and the local MiniLM
folder (models/all-MiniLM-L6-v2), cuts each message's text ("Subject", a blank line, the body) to 128
tokens as our `token_ids` does, and gives the head ours has: the features scaled on the training set,
dropout 0.1 and a linear map, AdamW (lr 1e-3, weight decay 0.01), 40 epochs of batches of 32; for
fine-tuning, mean pooling, AdamW 5e-5 with a linear warm-up over the first tenth of the steps then a
linear decay, dropout 0.1, gradients clipped at 1, batches of 32 drawn anew each epoch (grouped by length
inside megabatches, as ours; --sampler random for plain shuffled batches). Prints one JSON object
with the same metrics as `anatomy classify train --json`.
"""
import argparse
import json
import os
import random
import time

import torch
from transformers import AutoModel, AutoTokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, ".deps", "spam-assassin", "examples.jsonl")
MODEL = os.path.join(ROOT, "models", "all-MiniLM-L6-v2")


def load():
    examples = [json.loads(line) for line in open(EXAMPLES)]
    parts = {p: [e for e in examples if e["part"] == p] for p in ("train", "validation", "test")}
    return parts


def text(e):
    return f"{e['subject']}\n\n{e['body']}"


def metrics(predicted, examples):
    confusion = [[0, 0], [0, 0]]
    hard = hard_right = 0
    for p, e in zip(predicted, examples):
        confusion[e["label"]][p] += 1
        if e["group"] == "hard-ham-1":
            hard += 1
            hard_right += p == e["label"]
    tp = confusion[1][1]
    precision = tp / max(1, tp + confusion[0][1])
    recall = tp / max(1, tp + confusion[1][0])
    f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
    return {"accuracy": (confusion[0][0] + tp) / len(predicted), "precision": precision, "recall": recall, "f1": f1,
            "hard_ham_accuracy": hard_right / max(1, hard), "confusion": confusion}


def encode(tokenizer, examples, max_len):
    # The opening only, as ours reads it (16 characters per token is plenty), then truncated to max_len.
    return [tokenizer(text(e)[: max_len * 16], truncation=True, max_length=max_len)["input_ids"] for e in examples]


def batch(ids):
    s = max(len(i) for i in ids)
    input_ids = torch.tensor([i + [0] * (s - len(i)) for i in ids])
    mask = torch.tensor([[1] * len(i) + [0] * (s - len(i)) for i in ids])
    return input_ids, mask


def pool(hidden, mask, pooling):
    if pooling == "cls":
        return hidden[:, 0]
    m = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)


def features(model, tokenizer, examples, max_len, batch_size):
    ids = encode(tokenizer, examples, max_len)
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    cls, mean = [None] * len(ids), [None] * len(ids)
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            chunk = order[start:start + batch_size]
            input_ids, mask = batch([ids[i] for i in chunk])
            hidden = model(input_ids=input_ids, attention_mask=mask).last_hidden_state
            for k, i in enumerate(chunk):
                cls[i] = hidden[k, 0].clone()
                mean[i] = pool(hidden[k:k + 1], mask[k:k + 1], "mean")[0].clone()
    return torch.stack(cls), torch.stack(mean)


def train_head(x, y, vx, epochs, lr, batch_size, seed):
    torch.manual_seed(seed)
    shift, scale = x.mean(0), x.std(0).clamp(min=1e-6)
    head = torch.nn.Linear(x.shape[1], 2)
    optimizer = torch.optim.AdamW(head.parameters(), lr=lr, weight_decay=0.01)
    scaled = (x - shift) / scale
    for _ in range(epochs):
        order = torch.randperm(len(y))
        for start in range(0, len(y), batch_size):
            rows = order[start:start + batch_size]
            loss = torch.nn.functional.cross_entropy(head(torch.nn.functional.dropout(scaled[rows], 0.1)), y[rows])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    with torch.no_grad():
        return lambda f: head((f - shift) / scale).argmax(-1).tolist()


def frozen(args):
    parts = load()
    tokenizer, model = AutoTokenizer.from_pretrained(MODEL), AutoModel.from_pretrained(MODEL).eval()
    used = parts["train"] + parts["validation"] + parts["test"]
    began = time.perf_counter()
    cls, mean = features(model, tokenizer, used, args.max_len, 32)
    seconds = time.perf_counter() - began
    n, v = len(parts["train"]), len(parts["validation"])
    y = torch.tensor([e["label"] for e in parts["train"]])
    report = {"regime": "frozen", "max_len": args.max_len, "feature_seconds": seconds,
              "messages_per_s": len(used) / seconds, "pooling": {}}
    for name, f in (("cls", cls), ("mean", mean)):
        predict = train_head(f[:n], y, f[n:n + v], 40, 1e-3, 32, 0)
        report["pooling"][name] = {"test": metrics(predict(f[n + v:]), parts["test"])}
        from sklearn.linear_model import LogisticRegression
        from sklearn.preprocessing import StandardScaler
        scaler = StandardScaler().fit(f[:n].numpy())
        lr = LogisticRegression(max_iter=2000).fit(scaler.transform(f[:n].numpy()), y.numpy())
        report["pooling"][name]["sklearn_logistic_regression"] = metrics(
            lr.predict(scaler.transform(f[n + v:].numpy())).tolist(), parts["test"])
    print(json.dumps(report))


def baseline(args):
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    parts = load()
    vectorizer = CountVectorizer()
    x = vectorizer.fit_transform([text(e) for e in parts["train"]])
    model = LogisticRegression(max_iter=2000).fit(x, [e["label"] for e in parts["train"]])
    predicted = model.predict(vectorizer.transform([text(e) for e in parts["test"]])).tolist()
    print(json.dumps({"regime": "word counts + logistic regression", "test": metrics(predicted, parts["test"])}))


def epoch_batches(lengths, batch_size, sampler, megabatch=50):
    """One epoch's batches, as src/classify/sampler.rs makes them: shuffled, then cut (random), or cut into
    megabatches of 50 batches, each sorted by length and cut (grouped); then the batches in a new order."""
    order = list(range(len(lengths)))
    random.shuffle(order)
    if sampler == "random":
        batches = [order[s:s + batch_size] for s in range(0, len(order), batch_size)]
    else:
        batches = []
        for m in range(0, len(order), batch_size * megabatch):
            mega = sorted(order[m:m + batch_size * megabatch], key=lambda i: lengths[i])
            batches += [mega[s:s + batch_size] for s in range(0, len(mega), batch_size)]
    random.shuffle(batches)
    return batches


def fine_tune(args):
    parts = load()
    torch.manual_seed(args.seed)
    random.seed(args.seed)
    tokenizer, model = AutoTokenizer.from_pretrained(MODEL), AutoModel.from_pretrained(MODEL)
    head = torch.nn.Linear(model.config.hidden_size, 2)
    ids = encode(tokenizer, parts["train"], args.max_len)
    labels = [e["label"] for e in parts["train"]]
    total = args.steps
    batches = []
    while len(batches) < total:  # epochs, each shuffled into new batches (src/classify/sampler.rs)
        batches += epoch_batches([len(x) for x in ids], args.batch, args.sampler)
    warmup = round(0.1 * total)
    params = list(model.parameters()) + list(head.parameters())
    optimizer = torch.optim.AdamW(params, lr=5e-5, weight_decay=0.01, fused=True)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: (s + 1) / warmup if s + 1 <= warmup else max(0, total - s - 1) / max(1, total - warmup))
    model.train()
    began, times = time.perf_counter(), []
    for step, b in enumerate(batches[:total]):
        t = time.perf_counter()
        input_ids, mask = batch([ids[i] for i in b])
        hidden = model(input_ids=input_ids, attention_mask=mask).last_hidden_state
        logits = head(torch.nn.functional.dropout(pool(hidden, mask, "mean"), 0.1, True))
        loss = torch.nn.functional.cross_entropy(logits, torch.tensor([labels[i] for i in b]))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        schedule.step()
        times.append(time.perf_counter() - t)
    model.eval()
    test_ids = encode(tokenizer, parts["test"], args.max_len)
    predicted = []
    with torch.inference_mode():
        for s in range(0, len(test_ids), 32):
            input_ids, mask = batch(test_ids[s:s + 32])
            predicted += head(pool(model(input_ids=input_ids, attention_mask=mask).last_hidden_state, mask, "mean")).argmax(-1).tolist()
    times.sort()
    print(json.dumps({"regime": "fine-tune", "seed": args.seed, "sampler": args.sampler, "steps": total, "seconds": time.perf_counter() - began,
                      "median_step_s": times[len(times) // 2], "test": metrics(predicted, parts["test"])}))


REFERENCE_TEXTS = [
    "Cheap meds online!!! No prescription needed, order today and save 80%",
    "Re: the build fails on ARM\n\nI can reproduce it with the last merge; the patch below fixes it for me.",
    "Lunch on Friday?",
]


def reference(args):
    """Writes tests/data/spam_pooling_reference.json: a padded batch of three texts cut to 16 tokens,
    the ids Hugging Face's tokenizer gives, and the [CLS] and masked-mean vectors of MiniLM's last hidden
    state (first 16 numbers, sum and L2 norm of each), for tests/classify.rs to compare ours with."""
    tokenizer, model = AutoTokenizer.from_pretrained(MODEL), AutoModel.from_pretrained(MODEL).eval()
    ids = [tokenizer(t, truncation=True, max_length=16)["input_ids"] for t in REFERENCE_TEXTS]
    input_ids, mask = batch(ids)
    with torch.inference_mode():
        hidden = model(input_ids=input_ids, attention_mask=mask).last_hidden_state
    out = {"texts": REFERENCE_TEXTS, "max_len": 16, "input_ids": ids, "pooled": {}}
    for name in ("cls", "mean"):
        p = pool(hidden, mask, name).double()
        out["pooled"][name] = [{"first16": v[:16].tolist(), "sum": v.sum().item(), "l2": v.norm().item()} for v in p]
    path = os.path.join(ROOT, "tests", "data", "spam_pooling_reference.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
    print(f"wrote {path}")


def reference_head(hidden_size):
    """The head both sides start the step reference from, from a formula rather than a seed:
    weight[i][j] = 0.05 sin(1 + i hidden_size + j), bias [0.01, -0.02]."""
    head = torch.nn.Linear(hidden_size, 2)
    with torch.no_grad():
        k = torch.arange(2 * hidden_size, dtype=torch.float64).view(2, hidden_size)
        head.weight.copy_((0.05 * torch.sin(1 + k)).float())
        head.bias.copy_(torch.tensor([0.01, -0.02]))
    return head


STEP_TENSORS = ["embeddings.word_embeddings.weight", "encoder.layer.0.attention.self.query.weight",
                "encoder.layer.5.output.dense.weight", "encoder.layer.5.output.LayerNorm.bias",
                "classifier.weight", "classifier.bias"]


def step_reference(args):
    """Writes tests/data/spam_step_reference.json: one fine-tuning step as ours takes it (mean pooling, the
    linear head, cross-entropy, gradients clipped at norm 1, fused AdamW at 5e-5 with weight decay 0.01)
    on the three reference texts cut to 16 tokens (labels spam, ham, ham), with every dropout rate at 0 so
    that both sides compute the same numbers: the loss, the gradients' norm before clipping, the sum and
    L2 norm of a few clipped gradients, and the loss on the same batch after the step."""
    tokenizer = AutoTokenizer.from_pretrained(MODEL)
    model = AutoModel.from_pretrained(MODEL, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0).train()
    head = reference_head(model.config.hidden_size)
    ids = [tokenizer(t, truncation=True, max_length=16)["input_ids"] for t in REFERENCE_TEXTS]
    labels = torch.tensor([1, 0, 0])
    input_ids, mask = batch(ids)
    named = dict(model.named_parameters())
    named.update({"classifier." + k: v for k, v in head.named_parameters()})
    params = list(model.parameters()) + list(head.parameters())
    optimizer = torch.optim.AdamW(params, lr=5e-5, weight_decay=0.01, fused=True)

    def loss_now():
        hidden = model(input_ids=input_ids, attention_mask=mask).last_hidden_state
        return torch.nn.functional.cross_entropy(head(pool(hidden, mask, "mean")), labels)
    loss = loss_now()
    optimizer.zero_grad()
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(params, 1.0)
    grads = {n: {"sum": named[n].grad.double().sum().item(), "l2": named[n].grad.double().norm().item()}
             for n in STEP_TENSORS}
    optimizer.step()
    with torch.no_grad():
        after = loss_now().item()
    out = {"texts": REFERENCE_TEXTS, "max_len": 16, "labels": labels.tolist(), "input_ids": ids,
           "loss": loss.item(), "grad_norm": norm.item(), "clipped_grads": grads, "loss_after_step": after}
    path = os.path.join(ROOT, "tests", "data", "spam_step_reference.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
    print(f"wrote {path}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("what", choices=["frozen", "baseline", "fine-tune", "reference", "step-reference"])
    parser.add_argument("--max-len", type=int, default=128)
    parser.add_argument("--steps", type=int, default=148)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0, help="fine-tune: the seed of the head's start, dropout and batch order")
    parser.add_argument("--sampler", choices=["random", "grouped"], default="grouped",
                        help="fine-tune: which messages share a batch (as `anatomy classify train --sampler`)")
    args = parser.parse_args()
    torch.set_num_threads(torch.get_num_threads())
    {"frozen": frozen, "baseline": baseline, "fine-tune": fine_tune, "reference": reference,
     "step-reference": step_reference}[args.what](args)
