"""Fast checks of the models, the permutation augmentation and the training loop (both tasks); the bad configs are
tests/bad_config.yaml."""
import math
from itertools import pairwise

import pytest
import torch

from replications.dwsnets.common import align, permute_batch
from replications.dwsnets.model import build
from replications.dwsnets.train import fit
from shared.data.inr import inr_forward


WIDTHS = [1, 6, 5, 1]
MODELS = {"dws": {"channels": 3, "depth": 2, "head_hidden": 8}, "mlp": {"hidden": 8, "depth": 1},
          "mlp_aug": {"hidden": 8, "depth": 1}, "stats": {"hidden": 8, "depth": 1}}


def inrs(n, gen):
    w = [torch.randn(n, b, a, generator=gen) for a, b in pairwise(WIDTHS)]
    return w, [torch.randn(n, b, generator=gen) for b in WIDTHS[1:]]


def test_permute_batch_keeps_each_inr_function():
    gen = torch.Generator().manual_seed(0)
    w, b = [[t.double() for t in part] for part in inrs(5, gen)]
    pw, pb = permute_batch(w, b, gen)
    x = torch.linspace(-3, 3, 11, dtype=torch.float64)[:, None]
    assert torch.allclose(inr_forward(pw, pb, x, 30.0), inr_forward(w, b, x, 30.0), atol=1e-10)
    assert not torch.equal(pw[1], w[1])


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_models_run_and_invariant_ones_are_invariant(kind):
    gen = torch.Generator().manual_seed(1)
    torch.manual_seed(0)
    model = build({"kind": kind, "widths": WIDTHS, "n_outputs": 3, "model": MODELS[kind]}).double()
    w, b = [[t.double() for t in part] for part in inrs(4, gen)]
    out, permuted = model(w, b), model(*permute_batch(w, b, gen))
    assert out.shape == (4, 3)
    invariant = torch.allclose(out, permuted, atol=1e-10)
    assert invariant == (kind in ("dws", "stats"))


@pytest.mark.parametrize("regression", [True, False])
def test_fit_runs_both_tasks(regression):
    gen = torch.Generator().manual_seed(2)
    w, b = inrs(24, gen)
    y = torch.rand(24, generator=gen) * 9 + 0.5 if regression else torch.randint(0, 3, (24,), generator=gen)
    data = (w, b, y)
    torch.manual_seed(0)
    spec = {"kind": "dws", "widths": WIDTHS, "n_outputs": 1 if regression else 3,
            "model": {**MODELS["dws"], "depth": 1}}
    optim = {"steps": 5, "batch_size": 8, "lr": 1e-2, "weight_decay": 0.0}
    metric, trace = fit(build(spec), data, data, optim, regression, True, gen, "cpu")
    assert len(trace) == 5 and all(math.isfinite(v) for v in trace)
    assert metric >= 0 if regression else 0 <= metric <= 1


def test_alignment_keeps_functions_and_moves_towards_the_reference():
    gen = torch.Generator().manual_seed(3)
    w, b = [[t.double() for t in part] for part in inrs(6, gen)]
    data = (w, b, torch.zeros(6))
    reference = ([t[:1] for t in w], [t[:1] for t in b], torch.zeros(1))
    aw, ab, _ = align(data, reference)
    x = torch.linspace(-3, 3, 11, dtype=torch.float64)[:, None]
    assert torch.allclose(inr_forward(aw, ab, x, 30.0), inr_forward(w, b, x, 30.0), atol=1e-10)
    inner = lambda ws, bs: sum((t * r[:1]).sum() for t, r in zip(ws + bs, w + b))
    assert inner(aw, ab) >= inner(w, b) - 1e-9  # weight matching never lowers <reference, pi(theta)>
