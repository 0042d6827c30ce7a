"""What this paper's scripts share: the prepared images, test subsets, random directions and the attacks."""
import copy
import math

import torch

from shared.data.images import load_images
from shared.nn.adversarial import pgd_linf


def load_data(path):
    """Prepared dataset -> float32 inputs (N, c*s*s) in [0, 1], channels first (CIFAR is stored HWC), int64 labels."""
    return load_images(path, layout="flat")


def test_subset(data, n, seed):
    """n test images drawn without replacement by a seeded permutation (the split is sorted by class)."""
    g = torch.Generator().manual_seed(seed)
    idx = torch.randperm(len(data["x_test"]), generator=g)[:n]
    return data["x_test"][idx], data["y_test"][idx]


def unit_directions(basis, n, generator):
    """n random unit vectors of the span of `basis` (d, k): Gaussian coefficients on the orthonormal basis, as the
    paper's code draws them, normalised."""
    v = torch.randn(n, basis.shape[1], generator=generator, dtype=basis.dtype) @ basis.T
    return v / v.norm(dim=1, keepdim=True)


def smallest_flipping_attack(model, x, eps_grid, steps):
    """PGD on each image against its own prediction, at every eps of the grid. Returns (delta, eps, attacked):
    per image the perturbation (N, d) of the smallest eps that changes the prediction and that eps (N,) (NaN where
    none does), and the attacked inputs at each eps of the grid."""
    delta = torch.full_like(x, math.nan)
    found = torch.full((len(x),), math.nan, dtype=torch.float64)  # compared with the config's eps exactly
    pred = model(x).argmax(1)
    attacked = []
    for eps in eps_grid:
        x_adv = pgd_linf(model, x, pred, eps, steps)
        attacked.append(x_adv)
        flipped = (model(x_adv).argmax(1) != pred) & torch.isnan(found)
        delta[flipped] = (x_adv - x)[flipped]
        found[flipped] = eps
    return delta, found, attacked


def untrained_flip_rate(model, x, p):
    """Control for the PGD flip claims: the same attack's flip rate at flip_eps on the same architecture at a fresh
    initialisation (seeded by subset_seed; the global random stream is left as it was)."""
    fresh = copy.deepcopy(model)
    with torch.random.fork_rng():
        torch.manual_seed(p["subset_seed"])
        for layer in fresh.modules():
            if layer is not fresh and hasattr(layer, "reset_parameters"):
                layer.reset_parameters()
        _, eps, _ = smallest_flipping_attack(fresh, x, p["eps_grid"], p["pgd_steps"])
    return float((eps <= p["flip_eps"]).float().mean())
