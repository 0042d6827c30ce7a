"""The models that read INR weights: DWSNet (the paper's) and the baselines on the same input.

Every model takes (weights, biases): lists of (B, d_m, d_{m-1}) and (B, d_m) tensors, one per INR layer.
  * dws:     shared.nn.weight_space.DWSNet (equivariant DWS layers, invariant pooling, MLP head).
  * mlp:     an MLP on the flattened weights (the paper's "MLP" baseline); mlp_aug is the same model trained with
             random hidden-neuron permutations of each batch ("MLP + Perm. aug"); mlp_align reads every INR
             permuted to match a reference INR by weight matching ("MLP + Alignment", Git Re-Basin).
  * stats:   an MLP on per-tensor statistics (mean, std, quantiles), an invariant-features baseline (ours: it is
             not in the paper's sine figure; Unterthiner et al. 2020 predict network properties this way).
"""
from itertools import pairwise

import torch
from torch import nn

from shared.nn.weight_space import DWSNet

QUANTILES = (0.0, 0.25, 0.5, 0.75, 1.0)


def mlp(d_in, hidden, depth, d_out):
    layers, d = [], d_in
    for _ in range(depth):
        layers += [nn.Linear(d, hidden), nn.ReLU()]
        d = hidden
    return nn.Sequential(*layers, nn.Linear(d, d_out))


class FlatMLP(nn.Module):
    def __init__(self, n_params, hidden, depth, n_outputs):
        super().__init__()
        self.net = mlp(n_params, hidden, depth, n_outputs)

    def forward(self, weights, biases):
        return self.net(torch.cat([t.flatten(1) for t in list(weights) + list(biases)], 1))


class StatsMLP(nn.Module):
    def __init__(self, n_tensors, hidden, depth, n_outputs):
        super().__init__()
        self.register_buffer("q", torch.tensor(QUANTILES))
        self.net = mlp(n_tensors * (2 + len(QUANTILES)), hidden, depth, n_outputs)

    def forward(self, weights, biases):
        feats = []
        for t in list(weights) + list(biases):
            t = t.flatten(1)
            feats += [t.mean(1, keepdim=True), t.std(1, keepdim=True, correction=0),
                      torch.quantile(t, self.q.to(t.dtype), dim=1).T]
        return self.net(torch.cat(feats, 1))


def build(spec):
    """A model from a run spec: kind, widths (d_0 .. d_M of the INRs), n_outputs and the kind's config."""
    widths, cfg, out = spec["widths"], spec["model"], spec["n_outputs"]
    if spec["kind"] == "dws":
        return DWSNet(len(widths) - 1, widths[0], widths[-1], cfg["channels"], cfg["depth"], out, cfg["head_hidden"])
    if spec["kind"] in ("mlp", "mlp_aug", "mlp_align"):
        n_params = sum(a * b + b for a, b in pairwise(widths))
        return FlatMLP(n_params, cfg["hidden"], cfg["depth"], out)
    if spec["kind"] == "stats":
        return StatsMLP(2 * (len(widths) - 1), cfg["hidden"], cfg["depth"], out)
    raise ValueError(f"unknown model kind {spec['kind']!r}")
