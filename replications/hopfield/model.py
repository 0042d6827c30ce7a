"""The multiple-instance learner of the MNIST-bags experiment (the official repo's MNIST-bags demo, after Ilse et al.
2018): an instance embedding, a pooling of the bag, a linear head giving the bag's logit.

    instance x (784) -> ReLU MLP -> h (embed) ;  bag {h_1..h_n} -> pool -> z ;  logit = w.z + b

Poolings: `hopfield` (shared.nn.hopfield.HopfieldPooling with the package's defaults: one learned state pattern,
LayerNorm, beta = 1/sqrt(hidden), one update), `mean`, `max`, and `attention` (Ilse et al.'s attention-MIL,
a = softmax(w^T tanh(V h))), the MIL baseline the paper compares with.
"""
import torch
from torch import nn

from shared.nn.hopfield import HopfieldPooling

POOLINGS = ("hopfield", "mean", "max", "attention")


class AttentionPooling(nn.Module):
    def __init__(self, d, hidden):
        super().__init__()
        self.V, self.w = nn.Linear(d, hidden), nn.Linear(hidden, 1, bias=False)

    def forward(self, h, mask):
        scores = self.w(torch.tanh(self.V(h)))[..., 0].masked_fill(~mask, -torch.inf)
        return (torch.softmax(scores, -1)[..., None] * h).sum(1)


class MILNet(nn.Module):
    def __init__(self, pooling, d_input, embed, hidden, heads):
        super().__init__()
        self.pooling = pooling
        self.embed = nn.Sequential(nn.Linear(d_input, 2 * embed), nn.ReLU(), nn.Linear(2 * embed, embed), nn.ReLU())
        if pooling == "hopfield":
            self.pool = HopfieldPooling(embed, hidden_size=hidden, num_heads=heads, output_size=embed)
        elif pooling == "attention":
            self.pool = AttentionPooling(embed, hidden)
        self.head = nn.Linear(embed, 1)

    def forward(self, x, mask):
        """x (B, L, d_input), mask (B, L) True where an instance is -> bag logits (B,)."""
        h = self.embed(x)
        if self.pooling == "mean":
            m = mask[..., None].to(h.dtype)
            z = (h * m).sum(1) / m.sum(1)
        elif self.pooling == "max":
            z = h.masked_fill(~mask[..., None], -torch.inf).max(1).values
        else:
            z = self.pool(h, mask)
        return self.head(z)[:, 0]


def build(spec):
    """A model from a run spec; the caller seeds torch first so init is fixed by the seed."""
    return MILNet(spec["pooling"], spec["d_input"], spec["embed"], spec["hidden"], spec["heads"])
