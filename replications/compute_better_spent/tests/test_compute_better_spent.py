"""Fast checks of the model, the learning-rate groups and the explicit matrices; the bad configs are
tests/bad_config.yaml."""
import math

import pytest
import torch

from replications.compute_better_spent.analyze_identities import explicit, formula, table_of
from replications.compute_better_spent.model import build, dense_base_multipliers, options
from shared.nn.parametrization import initialize, param_groups
from shared.nn.structured import build as build_layer

SPEC = {"d_input": 784, "n_classes": 10, "depth": 1, "btt_rank": 1, "monarch_blocks": 4}


@pytest.mark.parametrize("structure,width", [("dense", 32), ("btt", 64), ("monarch", 64), ("kronecker", 64),
                                             ("low_rank", 64)])
def test_model_runs_and_counts(structure, width):
    model, _ = build({**SPEC, "structure": structure, "width": width}, "aware", torch.Generator().manual_seed(0))
    assert model(torch.randn(3, 784)).shape == (3, 10)
    assert torch.all(model(torch.randn(3, 784)) == 0)  # zero-init head
    opts = options(structure, width, SPEC)
    expected = sum(formula(structure, a, b, opts)[1] for a, b in ((width, 4 * width), (4 * width, width)))
    assert model.hidden_macs() == expected


def test_lr_groups_follow_the_paper():
    spec = {**SPEC, "structure": "btt", "width": 1024}
    base = dense_base_multipliers(spec, 64)
    aware = {g["name"]: g["lr"] for g in param_groups(build(spec, "aware")[1], 1.0, base_layers=base)}
    naive = {g["name"]: g["lr"] for g in param_groups(build(spec, "naive")[1], 1.0, base_layers=base)}
    # aware: 64 / (k fan_in_f) with fan_in 32 for core1 of 1024 -> 4096; naive: 64 / 1024 for every factor
    assert math.isclose(aware["up0.core1"], 64 / (2 * 32))
    assert math.isclose(naive["up0.core1"], 64 / 1024) and math.isclose(naive["up0.core2"], 64 / 1024)
    dense = {g["name"]: g["lr"] for g in param_groups(build({**SPEC, "structure": "dense", "width": 64})[1], 1.0,
                                                      base_layers=base)}
    assert all(math.isclose(v, 1.0) for v in dense.values())  # the base model trains at the base lr


@pytest.mark.parametrize("structure,opts", [("btt", {"rank": 2}), ("monarch", {"blocks": 4}), ("kronecker", {}),
                                            ("low_rank", {"rank": 3}), ("dense", {})])
def test_explicit_matrix(structure, opts):
    layer = build_layer(structure, 16, 64, **opts).double()
    initialize(table_of(layer), torch.Generator().manual_seed(1))
    x = torch.randn(4, 16, dtype=torch.float64)
    with torch.no_grad():
        assert torch.allclose(layer(x), x @ explicit(layer).T, atol=1e-12)


def test_curve_is_the_mean_over_seeds_per_width():
    from replications.compute_better_spent.analyze_scaling import curve
    run = {"structure": "btt", "hidden_macs": 10, "test_loss": 1.0, "final_train_error": 0.1}
    runs = {"w4-s0": {**run, "width": 4, "seed": 0, "train_loss": 1.0, "test_error": 0.2},
            "w4-s1": {**run, "width": 4, "seed": 1, "train_loss": 2.0, "test_error": 0.4},
            "w2-s0": {**run, "width": 2, "seed": 0, "train_loss": 3.0, "test_error": 0.5},
            "dense": {**run, "structure": "dense", "width": 2, "seed": 0, "train_loss": 9.0, "test_error": 0.9}}
    rows = curve(runs, "btt")
    assert [(r["width"], r["train_loss"], r["seeds"]) for r in rows] == [(2, 3.0, 1), (4, 1.5, 2)]
    assert rows[1]["test_error"] == pytest.approx(0.3)
    assert [(r["width"], r["train_loss"]) for r in curve(runs, "btt", seed=1)] == [(4, 2.0)]
