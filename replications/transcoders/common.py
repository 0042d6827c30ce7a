"""What the transcoders scripts share: the planted feature-circuit teacher, feature matching and AUROC, and the
language model's activations, splices and cross-entropies.

The planted teacher (two MLPs in a residual stream, true feature-to-feature edges G known):

    s      K sparse input features (each active with probability p, magnitude U(0.5, 1.5))
    x1     = A s + noise                        A (d, K): unit input directions, K > d (superposition)
    MLP1   h1 = ReLU(A^T x1 - theta1),  y1 = B h1           B (d, K): unit output directions
    x2     = x1 + y1                            the residual stream after MLP1
    MLP2   h2 = ReLU(G B^T x2 - theta2), y2 = C h2          G (K2, K): each output feature has 1-3 parents
                                                            with weights U(0.5, 1.5); C (d, K2) unit directions

A transcoder of MLP1 should learn decoders ~ B_i, one of MLP2 encoders ~ sum_i G_ji B_i, so the input-invariant
weight product f_dec,i^(1) . f_enc,j^(2) is ~ G_ji plus the interference B_i . B_k of superposition.
"""
import torch
import torch.nn.functional as F

from shared.io.runtime import generator
from shared.io.smoke import capped
from shared.nn.circuits import splice
from shared.pipeline.run import load_models

from .model import build


def _unit_columns(d, n, gen):
    m = torch.randn(d, n, generator=gen, dtype=torch.float64)
    return m / m.norm(dim=0, keepdim=True)


def planted_teacher(t, seed):
    """{A, B, C, G} of the teacher of `seed` (float64)."""
    gen = generator(1000 + seed)
    K, K2, d = t["features"], t["features_out"], t["d"]
    A, B, C = _unit_columns(d, K, gen), _unit_columns(d, K, gen), _unit_columns(d, K2, gen)
    G = torch.zeros(K2, K, dtype=torch.float64)
    low, high = t["parents"]
    for j in range(K2):
        n = int(torch.randint(low, high + 1, (1,), generator=gen))
        parents = torch.randperm(K, generator=gen)[:n]
        G[j, parents] = 0.5 + torch.rand(n, generator=gen, dtype=torch.float64)
    return {"A": A, "B": B, "C": C, "G": G}


def teacher_sample(T, t, n, gen):
    """n samples of the teacher: {x1, y1, x2, y2, h1, h2} (float64)."""
    K = T["A"].shape[1]
    on = torch.rand(n, K, generator=gen, dtype=torch.float64) < t["p"]
    s = on * (0.5 + torch.rand(n, K, generator=gen, dtype=torch.float64))
    x1 = s @ T["A"].T + t["noise"] * torch.randn(n, T["A"].shape[0], generator=gen, dtype=torch.float64)
    h1 = (x1 @ T["A"] - t["theta1"]).relu()
    y1 = h1 @ T["B"].T
    x2 = x1 + y1
    h2 = (x2 @ T["B"] @ T["G"].T - t["theta2"]).relu()
    return {"x1": x1, "y1": y1, "x2": x2, "y2": h2 @ T["C"].T, "h1": h1, "h2": h2}


def cosines(rows, columns):
    """(n_rows, n_columns) cosine between each row of `rows` and each column of `columns`."""
    return F.normalize(rows, dim=1) @ F.normalize(columns, dim=0)


def match(rows, columns):
    """For each true direction (column): (best signed cosine over the learned rows, index of that row; a feature
    writes or reads with a sign, so an anti-aligned row is not a match)."""
    best = cosines(rows, columns).max(0)
    return best.values, best.indices


def auroc(scores, labels):
    """Area under the ROC curve of `scores` for binary `labels` (Mann-Whitney; tied scores share their average rank,
    so a tie counts half)."""
    from scipy.stats import rankdata

    scores, labels = scores.detach().flatten().double().cpu().numpy(), labels.flatten().bool().cpu().numpy()
    ranks = rankdata(scores)  # average ranks over ties
    n_pos, n_neg = int(labels.sum()), int((~labels).sum())
    return float((ranks[labels].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


# --- the language model ----------------------------------------------------------------------------------------

def load_checkpoint(path, device="cpu"):
    models, specs, meta = load_models(path, build)
    return {name: m.to(device) for name, m in models.items()}, specs, meta


class SAEOnOutput(torch.nn.Module):
    """The MLP followed by an SAE's reconstruction of its output: the SAE's splice (like with like: both the
    transcoder and the SAE then supply the MLP's output)."""

    def __init__(self, mlp, sae):
        super().__init__()
        self.mlp, self.sae = mlp, sae

    def forward(self, x):
        return self.sae(self.mlp(x))


class ZeroMLP(torch.nn.Module):
    def forward(self, x):
        return torch.zeros_like(x)


@torch.no_grad()
def cross_entropy(model, windows, batch_size=64):
    """Mean next-token cross-entropy of windows (n, T + 1), one batch per step (a smoke run reads a few)."""
    total, count, n = 0.0, 0, -(-len(windows) // batch_size)
    for i in capped(range(n), n, "cross_entropy"):
        w = windows[i * batch_size:(i + 1) * batch_size]
        total += model.loss(w).item() * len(w)
        count += len(w)
    return total / count


@torch.no_grad()
def ce_with_mlp(model, windows, layer, mlp, batch_size=64):
    """Cross-entropy with block `layer`'s MLP replaced by `mlp` (restored after)."""
    saved = model.blocks[layer].mlp
    model.blocks[layer].mlp = mlp
    try:
        return cross_entropy(model, windows, batch_size)
    finally:
        model.blocks[layer].mlp = saved


@torch.no_grad()
def ce_with_transcoder(model, windows, layer, transcoder, batch_size=64):
    with splice(model, {layer: transcoder}):
        return cross_entropy(model, windows, batch_size)


def recovered(ce, clean, zero):
    """Fraction of the CE increase of zero-ablating the MLP that a replacement recovers (1: clean, 0: as zero)."""
    return (zero - ce) / (zero - clean)


def frontier_gap(l0_a, rec_a, l0_b, rec_b, points=16):
    """Mean of (a - b) in CE recovered over the L0 range both frontiers cover, each interpolated linearly in log L0
    (points sorted by L0). Where the ranges do not overlap: a at its point nearest b's range minus b's nearest point."""
    import numpy as np

    la, ra = np.log(np.asarray(l0_a, float)), np.asarray(rec_a, float)
    lb, rb = np.log(np.asarray(l0_b, float)), np.asarray(rec_b, float)
    ia, ib = np.argsort(la), np.argsort(lb)
    la, ra, lb, rb = la[ia], ra[ia], lb[ib], rb[ib]
    lo, hi = max(la[0], lb[0]), min(la[-1], lb[-1])
    if lo <= hi:
        grid = np.linspace(lo, hi, points)
        return float(np.mean(np.interp(grid, la, ra) - np.interp(grid, lb, rb))), True
    if la[-1] < lb[0]:
        return float(ra[-1] - rb[0]), False
    return float(ra[0] - rb[-1]), False
