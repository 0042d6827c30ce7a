"""The models of phm, every linear map one of LAYERS (shared.nn.phm for PHM and the quaternion layer):

  * a single layer d -> d without bias: the student of the planted-teacher experiment (and the teachers);
  * an MLP d_in -> h -> h -> classes with ReLU, whose two hidden maps are of the run's layer kind (a bias each) and
    whose head is dense (10 classes are not divisible by n); `kind` linear is the head alone.

Layer kinds: dense (nn.Linear's weight), phm (PHM with learned A_i, `n`), quaternion (PHM with A_i fixed to the
Hamilton matrices, n = 4). PHM factors get shared.nn.phm's init (H with nn.Linear's variance).
"""
from itertools import pairwise

import torch
import torch.nn.functional as F
from torch import nn

from shared.nn.phm import PHM, hamilton_matrices

LAYERS = ("dense", "phm", "quaternion")


class Map(nn.Module):
    """One linear map of a layer kind, with an optional dense bias (PHM's b of Eq. 3.2)."""

    def __init__(self, layer, d_in, d_out, n, bias):
        super().__init__()
        if layer == "dense":
            self.map = nn.Linear(d_in, d_out, bias=False)
        else:
            fixed = hamilton_matrices(torch.float32) if layer == "quaternion" else None
            self.map = PHM(d_in, d_out, 4 if layer == "quaternion" else n, fixed_a=fixed).reset_parameters()
        self.bias = nn.Parameter(torch.zeros(d_out)) if bias else None

    def forward(self, x):
        y = self.map(x)
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


def build(spec):
    """A model from a run spec; the caller seeds torch first, so the init depends on the run's seed only."""
    if spec["arch"] == "layer":
        return Map(spec["layer"], spec["d"], spec["d"], spec.get("n", 4), bias=False)
    return MLP(spec["d_in"], spec["hidden"], spec["n_classes"], spec["layer"], spec.get("n", 1))
