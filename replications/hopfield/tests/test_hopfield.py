"""hopfield: the bags (balanced, positives hold the target), the AUC, the capacity probes on known cases, the MIL
poolings on padded bags, and the committed tiers' settings."""
import pytest
import torch

from replications.hopfield import analyze_theory as theory
from replications.hopfield import common, model
from shared.pipeline.paper import load_papers


def test_bags_are_balanced_and_labelled():
    y = torch.arange(100) % 10
    index, mask, labels = common.make_bags(y, 40, 9, 6, 2, torch.Generator().manual_seed(0))
    assert labels.sum() == 20 and mask.sum(1).min() >= 2
    for i in range(40):
        held = y[index[i][mask[i]]]
        assert bool((held == 9).any()) == bool(labels[i])


def test_auc():
    assert common.auc(torch.tensor([0.1, 0.4, 0.35, 0.8]), torch.tensor([0, 0, 1, 1])) == 0.75
    assert common.auc(torch.tensor([1.0, 1.0]), torch.tensor([0, 1])) == 0.5


def test_capacity_probes_known_cases():
    c = {"probes": 8, "flip_fraction": 0.125, "beta": 4.0}
    H = torch.ones(1, 1, dtype=torch.float64)
    for _ in range(3):
        H = torch.cat([torch.cat([H, H], 1), torch.cat([H, -H], 1)])
    X = H  # Sylvester-Hadamard: 8 patterns, each pair 4 signs apart
    gen = torch.Generator().manual_seed(0)
    assert theory.retrieval_rate(X, c, gen, "modern") == 1.0
    assert theory.retrieval_rate(X[:1], c, gen, "hebbian") == 1.0  # one stored pattern: Hebb retrieves it
    assert theory.retrieval_rate(X, {**c, "beta": 1e-3}, gen, "modern") < 0.5  # near the mean: nothing retrieved


@pytest.mark.parametrize("pooling", model.POOLINGS)
def test_poolings_ignore_padding(pooling):
    torch.manual_seed(0)
    net = model.build({"pooling": pooling, "d_input": 6, "embed": 8, "hidden": 4, "heads": 1}).eval()
    x = torch.randn(2, 5, 6)
    mask = torch.tensor([[True, True, True, False, False], [True] * 5])
    padded = x.clone()
    padded[0, 3:] = 100.0
    assert torch.allclose(net(x, mask), net(padded, mask), atol=1e-6)


@pytest.mark.parametrize("tier", ["quick", "full"])
def test_committed_tiers(tier):
    cfg = load_papers(["hopfield"], tier, {})["hopfield"].cfg
    assert cfg["retrieval"]["main_beta"] in cfg["retrieval"]["betas"]
    assert len(cfg["mil"]["seeds"]) >= 3
