"""The models of phm, every linear map one of LAYERS (shared.nn.phm for PHM and the quaternion layer):

  * a single layer d -> d without bias: the student of the planted-teacher experiment (and the teachers);
  * an MLP d_in -> h -> h -> classes with ReLU, whose two hidden maps are of the run's layer kind (a bias each) and
    whose head is dense (10 classes are not divisible by n); `kind` linear is the head alone;
  * a one-block Transformer encoder classifier of token sequences whose Q, K, V, output and feed-forward maps are of
    the run's layer kind (a PHM-Transformer at layer phm), and its bag-of-words control.

Layer kinds: dense (nn.Linear's weight), phm (PHM with learned A_i, `n`), quaternion (PHM with A_i fixed to the
Hamilton matrices, n = 4). PHM factors get shared.nn.phm's init (H with nn.Linear's variance).
"""
from itertools import pairwise

import torch
import torch.nn.functional as F
from torch import nn

from shared.nn.phm import PHM, hamilton_matrices

LAYERS = ("dense", "phm", "quaternion")  # and "bow" for the sequence classifier (no maps of a kind)


class Map(nn.Module):
    """One linear map of a layer kind, with an optional dense bias (PHM's b of Eq. 3.2)."""

    def __init__(self, layer, d_in, d_out, n, bias, materialise=False):
        super().__init__()
        self.materialise = materialise and layer != "dense"
        if layer == "dense":
            self.map = nn.Linear(d_in, d_out, bias=False)
        else:
            fixed = hamilton_matrices(torch.float32) if layer == "quaternion" else None
            self.map = PHM(d_in, d_out, 4 if layer == "quaternion" else n, fixed_a=fixed).reset_parameters()
        self.bias = nn.Parameter(torch.zeros(d_out)) if bias else None

    def forward(self, x):
        # materialise: form H = sum_i kron(A_i, S_i) once per call, then x H^T (cheaper than PHM.forward's einsums
        # when many rows share one H, as the tokens of a batch of sequences do; the same function of A and S)
        y = F.linear(x, self.map.kron_matrix()) if self.materialise else self.map(x)
        return y if self.bias is None else y + self.bias


class MLP(nn.Module):
    def __init__(self, d_in, hidden, n_classes, layer, n):
        super().__init__()
        self.hidden = nn.ModuleList(Map(layer, a, b, n, bias=True) for a, b in pairwise([d_in, *hidden]))
        self.head = nn.Linear(hidden[-1] if hidden else d_in, n_classes)

    def forward(self, x):
        for m in self.hidden:
            x = F.relu(m(x))
        return self.head(x)


class SelfAttention(nn.Module):
    """Multi-head self-attention (no mask) whose Q, K, V and output maps are each one Map of the layer kind."""

    def __init__(self, d, n_head, layer, n):
        super().__init__()
        self.n_head = n_head
        self.q, self.k, self.v, self.o = (Map(layer, d, d, n, bias=True, materialise=True) for _ in range(4))

    def forward(self, x):
        heads = [m(x).unflatten(-1, (self.n_head, -1)).transpose(1, 2) for m in (self.q, self.k, self.v)]
        return self.o(F.scaled_dot_product_attention(*heads).transpose(1, 2).flatten(2))


class EncoderBlock(nn.Module):
    """Pre-LayerNorm Transformer encoder block: h + attn(LN h), then h + W2 relu(W1 LN h); LayerNorms dense."""

    def __init__(self, d, n_head, d_ff, layer, n):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = SelfAttention(d, n_head, layer, n)
        self.up = Map(layer, d, d_ff, n, bias=True, materialise=True)
        self.down = Map(layer, d_ff, d, n, bias=True, materialise=True)

    def forward(self, h):
        h = h + self.attn(self.norm1(h))
        return h + self.down(F.relu(self.up(self.norm2(h))))


class SeqClassifier(nn.Module):
    """tokens (B, L) -> token + learned position embeddings -> `depth` EncoderBlocks whose six maps are of the run's
    layer kind (PHM-Transformer: embeddings, LayerNorm, softmax and head stay dense) -> LayerNorm -> mean over
    positions -> dense head. layer "bow": a bag of words, no positions and no attention: the mean token embedding
    through a dense ReLU layer of width d_ff and the head (the control that order is needed)."""

    def __init__(self, vocab, length, d, n_head, d_ff, depth, n_classes, layer, n):
        super().__init__()
        self.bow = layer == "bow"
        self.embed = nn.Embedding(vocab, d)
        self.pos = None if self.bow else nn.Parameter(0.02 * torch.randn(length, d))
        self.blocks = nn.ModuleList() if self.bow else nn.ModuleList(
            EncoderBlock(d, n_head, d_ff, layer, n) for _ in range(depth))
        self.mix = nn.Sequential(nn.Linear(d, d_ff), nn.ReLU(), nn.Linear(d_ff, d)) if self.bow else nn.LayerNorm(d)
        self.head = nn.Linear(d, n_classes)

    def forward(self, tokens):
        h = self.embed(tokens)
        if self.bow:
            return self.head(self.mix(h.mean(1)))
        h = h + self.pos
        for block in self.blocks:
            h = block(h)
        return self.head(self.mix(h).mean(1))


def build(spec):
    """A model from a run spec; the caller seeds torch first, so the init depends on the run's seed only."""
    if spec["arch"] == "seq":
        return SeqClassifier(spec["vocab"], spec["length"], spec["d_model"], spec["n_head"], spec["d_ff"],
                             spec["depth"], 2, spec["layer"], spec.get("n", 1))
    if spec["arch"] == "layer":
        return Map(spec["layer"], spec["d"], spec["d"], spec.get("n", 4), bias=False)
    return MLP(spec["d_in"], spec["hidden"], spec["n_classes"], spec["layer"], spec.get("n", 1))
