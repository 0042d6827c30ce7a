"""Planted manifolds with known ground truth (the dossier's quick-tier generator).

Every component lives in its own block of a random orthonormal basis of R^d, so components are mutually
orthogonal and each has a known subspace:
  circles    c w + cos(theta) u + sin(theta) v        off-centre circles (c in [0.5, 1]), the year-circle analogue
  triangle   offset w + a point on the edges of an equilateral triangle in (u, v)   the "new"-triangle analogue
  clusters   one of 5 fixed unit points of its 3-D block, plus jitter
  directions s e, s in [0.5, 1.5]                     linear concepts
A sample is a sum of components, each present with probability `p_active` (at least one) and scaled by an
amplitude in [0.5, 1.5], plus isotropic noise; the autoencoder unit-normalises it.
"""
import numpy as np

from shared.pipeline.run import derive_seed

KINDS = ("circle", "triangle", "cluster", "direction")


def layout(counts):
    """[(name, kind, dims)] in basis order, e.g. circle0 (3 dims) ... direction3 (1 dim)."""
    out = []
    for kind in KINDS:
        for i in range(counts[kind]):
            out.append((f"{kind}{i}", kind, 1 if kind == "direction" else 3))
    return out


def generate(n, d, counts, p_active, noise, seed, basis_seed):
    """x (n, d) float32 and ground truth: active (n, components) amplitudes (0 = absent), phase (n, components)
    (circle angle, triangle edge position in [0, 3), cluster index; NaN when absent or a direction), and the
    orthonormal basis block of every component (components, d, 3; directions use column 0)."""
    parts = layout(counts)
    basis = np.linalg.qr(np.random.default_rng(basis_seed).standard_normal((d, d)))[0]
    if sum(dims for _, _, dims in parts) > d:
        raise ValueError(f"{len(parts)} components need more than d = {d} dimensions")
    blocks, start = [], 0
    for _, _, dims in parts:
        block = np.zeros((d, 3))
        block[:, :dims] = basis[:, start:start + dims]
        blocks.append(block)
        start += dims
    centres = np.random.default_rng(derive_seed(basis_seed, "centres")).standard_normal((counts["cluster"], 5, 3))
    centres /= np.linalg.norm(centres, axis=-1, keepdims=True)

    rng = np.random.default_rng(seed)
    active = rng.random((n, len(parts))) < p_active
    none = ~active.any(1)
    active[none, rng.integers(0, len(parts), none.sum())] = True  # at least one component per sample
    amplitude = np.where(active, rng.uniform(0.5, 1.5, active.shape), 0.0)
    phase = np.full(active.shape, np.nan)
    x = noise * rng.standard_normal((n, d))
    cluster_id = 0
    for c, (_, kind, _) in enumerate(parts):
        if kind == "circle":
            theta = rng.uniform(0, 2 * np.pi, n)
            local = np.stack([rng.uniform(0.5, 1.0, n), np.cos(theta), np.sin(theta)], 1)
            value = theta
        elif kind == "triangle":
            edge, t = rng.integers(0, 3, n), rng.random(n)
            corners = np.stack([np.cos(a) for a in 2 * np.pi * np.arange(3) / 3 + np.pi / 2]), \
                np.stack([np.sin(a) for a in 2 * np.pi * np.arange(3) / 3 + np.pi / 2])
            corners = np.stack(corners, 1)  # (3 corners, 2)
            point = (1 - t)[:, None] * corners[edge] + t[:, None] * corners[(edge + 1) % 3]
            local = np.concatenate([np.full((n, 1), 0.8), point], 1)
            value = edge + t
        elif kind == "cluster":
            which = rng.integers(0, 5, n)
            local = centres[cluster_id][which] + 0.05 * rng.standard_normal((n, 3))
            value, cluster_id = which.astype(float), cluster_id + 1
        else:
            local = np.stack([rng.uniform(0.5, 1.5, n), np.zeros(n), np.zeros(n)], 1)
            value = np.full(n, np.nan)
        x += amplitude[:, c:c + 1] * (local @ blocks[c].T)
        phase[:, c] = np.where(active[:, c], value, np.nan)
    return x.astype(np.float32), amplitude.astype(np.float32), phase.astype(np.float32), np.stack(blocks).astype(np.float32)
