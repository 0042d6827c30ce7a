"""layer_rotation: the tiers' run specs, the optimizer each spec gets (Layca's per-layer rates and frozen
non-kernel parameters, weight decay on kernels only), the step schedule, the per-class subset, and one short
training run's history."""
import pytest
import torch

from replications.layer_rotation import common, model
from shared.nn.layer_rotation import kernels
from shared.pipeline.paper import load_papers
from shared.train.layca import Layca, alpha_multipliers

PAPER = "layer_rotation"


@pytest.mark.parametrize("tier", ["quick", "full"])
def test_specs_cover_the_grids(tier):
    cfg = load_papers([PAPER], tier, {})[PAPER].cfg
    g, s, m = cfg["grid"], cfg["standard"], cfg["mnist"]
    grid = common.specs(cfg, "grid")
    assert len(grid) == len(g["alphas"]) * len(g["exponents"]) * len(g["seeds"])
    assert len({x["name"] for x in grid}) == len(grid)
    assert len(common.specs(cfg, "standard")) == (2 * len(s["sgd_exponents"]) + 2) * len(s["seeds"])
    mnist = common.specs(cfg, "mnist")
    assert {x["lr"] for x in mnist} == {3.0 ** -k for k in m["exponents"]} and mnist[0]["hidden"] == [784]


def spec(**kw):
    return {"d_input": 12, "hidden": [8, 8], "n_classes": 3, "opt": "sgd", "layca": True, "lr": 0.1, "alpha": 0.4,
            "weight_decay": 0.0, **kw}


def test_layca_gets_one_group_per_kernel_at_its_alpha_rate():
    torch.manual_seed(0)
    net = model.build(spec())
    opt = common.optimizer(net, spec())
    assert isinstance(opt, Layca)
    ks = [p for _, p in kernels(net)]
    rates = [0.1 * r for r in alpha_multipliers(3, 0.4)]
    for group, p, r in zip(opt.param_groups, ks, rates):
        assert group["params"] == [p] and group["lr"] == pytest.approx(r)
    assert len(opt.param_groups[-1]["params"]) == sum(p.ndim < 2 for p in net.parameters())


def test_weight_decay_only_on_kernels():
    torch.manual_seed(0)
    net = model.build(spec())
    opt = common.optimizer(net, spec(layca=False, weight_decay=5e-4))
    kernel_group, other_group = opt.param_groups
    assert kernel_group["weight_decay"] == 5e-4 and other_group["weight_decay"] == 0.0
    assert all(p.ndim == 2 for p in kernel_group["params"]) and all(p.ndim == 1 for p in other_group["params"])


def test_step_decay():
    policy = common.step_decay(10, [0.8, 0.9], 0.2)
    assert [policy(1.0, e, 10) for e in (0, 7, 8, 9)] == pytest.approx([1.0, 1.0, 0.2, 0.04])


def test_model_is_keras_like():
    torch.manual_seed(0)
    net = model.build(spec())
    assert all(float(m.bias.detach().abs().max()) == 0 for m in net if isinstance(m, torch.nn.Linear))
    assert [m.eps for m in net if isinstance(m, torch.nn.BatchNorm1d)] == [1e-3, 1e-3]


def test_train_run_records_rotation_and_freezes_the_rest(tmp_path):
    torch.manual_seed(0)
    x = torch.rand(64, 12)
    data = {"x_train": x, "y_train": (x[:, 0] > 0.5).long(), "x_test": x[:16], "y_test": (x[:16, 0] > 0.5).long()}
    s = spec()
    net = model.build(s)
    before = [p.detach().clone() for p in net.parameters() if p.ndim < 2]
    e = {"batch_size": 16, "epochs": 2, "milestones": [0.5], "decay": 0.2}
    history = common.train_run(net, s, data, e, torch.Generator().manual_seed(0))
    assert len(history["rotation"]) == 2 and len(history["rotation"][0]) == 3
    assert all(0 < r < 2 for r in history["rotation"][-1])
    assert all(torch.equal(p, b) for p, b in zip((p for p in net.parameters() if p.ndim < 2), before))
