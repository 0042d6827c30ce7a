"""quadratic_networks: the tiers' runs, the toy tasks, ReLinear's reference to the conventional network (MLP and
ResNet20), the functional-dimension measure on known cases, and gamma = 0 training equal to the conventional one."""
import pytest
import torch

from replications.quadratic_networks import analyze_expressivity as expressivity
from replications.quadratic_networks import common, model
from shared.pipeline.paper import load_papers

PAPER = "quadratic_networks"


@pytest.mark.parametrize("tier", ["quick", "full"])
def test_committed_tiers_hold_the_grid_and_the_sweep(tier):
    e = load_papers([PAPER], tier, {})[PAPER].cfg["images"]
    names = {s["name"] for s in common.image_specs({"images": e})}
    for arm in common.ARMS:
        for lr in e["lrs"]:
            for seed in e["seeds"]:
                gamma = e["relinear_gamma"] if arm == "relinear" else None
                assert common.image_name(arm, lr, seed, gamma) in names
    for gamma in e["sweep"]["gammas"]:
        assert common.image_name("relinear", e["main_lr"], e["sweep"]["seeds"][0], gamma) in names


def test_toy_tasks_and_matched_width():
    gen = torch.Generator().manual_seed(0)
    x, y = common.toy_data("xor", 0, 8, gen)
    assert y.tolist() == [1.0, 0.0, 0.0, 1.0]
    x, y = common.toy_data("radial", 100, 8, gen)
    assert x.shape == (100, 8) and torch.allclose(y, (x * x).sum(1))
    budget = common.net_params(8, [2], 1, "quadratic")
    width = common.matched_width(8, budget)
    assert common.net_params(8, [width], 1, "conventional") >= budget > common.net_params(8, [width - 1], 1,
                                                                                           "conventional")


@pytest.mark.parametrize("spec", [{"arch": "mlp", "d_in": 6, "hidden": [5, 4], "d_out": 3},
                                  {"arch": "resnet20", "n_classes": 10}])
def test_relinear_build_is_the_conventional_network_of_its_seed(spec):
    nets = {}
    for init, neuron in (("relinear", "quadratic"), ("kaiming", "conventional")):
        torch.manual_seed(3)
        nets[init] = model.build({**spec, "init": init, "neuron": neuron}).double().eval()
    x = torch.randn(2, 6, dtype=torch.float64) if spec["arch"] == "mlp" else torch.randn(2, 3, 32, 32,
                                                                                         dtype=torch.float64)
    assert torch.equal(nets["relinear"](x), nets["kaiming"](x))


def test_functional_dimension_known_cases():
    gen = torch.Generator().manual_seed(0)
    # x -> a (w . x)^2 + ...: symmetric matrices of rank <= d1
    assert expressivity.functional_dimension([4, 2, 1], "conventional", False, gen, 1e-9)[0] == 4 * 2 - 1
    # a single quadratic neuron with biases spans every polynomial of degree <= 2 in 2 variables (6 monomials)
    assert expressivity.functional_dimension([2, 1], "quadratic", True, gen, 1e-9)[0] == 6


def test_gamma_zero_trains_the_conventional_network():
    gen = torch.Generator().manual_seed(0)
    data = {"x_train": torch.randn(64, 6, generator=gen), "y_train": torch.randint(0, 3, (64,), generator=gen)}
    e = {"batch_size": 16, "epochs": 2, "weight_decay": 1e-4, "milestones": [0.5], "augment": False}
    base = {"arch": "mlp", "d_in": 6, "hidden": [5], "d_out": 3, "lr": 0.1}
    nets = {}
    for init, neuron in (("relinear", "quadratic"), ("kaiming", "conventional")):
        torch.manual_seed(1)
        spec = {**base, "init": init, "neuron": neuron, "gamma": 0.0}
        nets[init] = model.build(spec)
        history, diverged = common.train_image_model(nets[init], spec, data, e, torch.Generator().manual_seed(2),
                                                     "cpu")
        assert diverged is None and len(history) == 2
    assert torch.equal(nets["relinear"](data["x_train"]), nets["kaiming"](data["x_train"]))
