"""bcos_networks: the tiers' skipped steps, the models' exact maps, calibration, the localisation score and the toy."""
import numpy as np
import pytest
import torch

from replications.bcos_networks import analyze, model, pipeline
from shared.pipeline.paper import load_papers
from shared.stats import rel_err

PAPER = "bcos_networks"
SHAPE = {"in_channels": 1, "channels": [4, 6], "kernels": [3, 3, 1], "strides": [1, 2, 1], "n_classes": 10}


@pytest.mark.parametrize("tier", ["quick", "full"])
def test_committed_tiers_skip_imagenet_and_quick_skips_cifar10(tier):
    paper = load_papers([PAPER], tier, {})[PAPER]
    assert set(paper.skipped) == ({"imagenet"} if tier == "full" else {"imagenet", "cifar10"})



def test_arm_names():
    assert pipeline.arms({"b_values": [1, 1.25, 2], "baseline": True}) == {"B1": 1, "B1p25": 1.25, "B2": 2,
                                                                           "relu": None}


@pytest.mark.parametrize("arch", ["bcos", "relu"])
def test_models_are_their_linear_maps(arch):
    torch.manual_seed(0)
    net = model.build({**SHAPE, "arch": arch, "b": 2.0, "max_out": 2, "temperature": 1.0})
    x = torch.rand(3, 1, 8, 8)
    net.calibrate(x)
    weight, bias, out, encoded = analyze.linear_map(net, x)
    assert encoded.shape[1] == (2 if arch == "bcos" else 1)
    assert rel_err((weight * encoded[:, None]).flatten(2).sum(-1) + bias, out) < 1e-10


def test_calibration_gives_unit_rms_layers():
    torch.manual_seed(0)
    net = model.build({**SHAPE, "arch": "bcos", "b": 2.5, "max_out": 2, "temperature": 1.0})
    x = torch.rand(16, 1, 8, 8)
    net.calibrate(x)
    h = net.encode(x)
    for layer in list(net.body)[:3]:
        h = layer(h)
        assert h.pow(2).mean().sqrt().item() == pytest.approx(1.0, rel=1e-4)


def test_cell_shares_and_grids():
    maps = torch.zeros(2, 4, 4, dtype=torch.float64)
    maps[0, :2, :2] = 1.0          # all positive mass in cell 0
    maps[1, 2:, :2], maps[1, 0, 0] = 3.0, 2.0  # cell 2 holds 12 of 14
    shares = analyze.cell_shares(maps, torch.tensor([0, 2]), 2)
    torch.testing.assert_close(shares, torch.tensor([1.0, 12 / 14], dtype=torch.float64))
    x = torch.arange(10).float().view(10, 1, 1, 1).expand(10, 1, 2, 2)
    images, classes = analyze.make_grids(x, [np.array([c]) for c in range(10)], 2, 3, np.random.default_rng(0))
    assert images.shape == (3, 1, 4, 4)
    assert all(len(set(row.tolist())) == 4 for row in classes)
    assert images[0, 0, 0, 0].item() == classes[0, 0].item() and images[0, 0, 3, 3].item() == classes[0, 3].item()


def test_toy_sweep_is_deterministic():
    p = {"points": 10, "noise": 0.05, "angles": 360, "b_values": [1, 50], "seed": 0}
    first, arrays = analyze.toy(p)
    assert first == analyze.toy(p)[0] and arrays["toy_loss_B1"].shape == (360,)
