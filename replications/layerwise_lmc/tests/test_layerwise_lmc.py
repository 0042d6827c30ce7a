"""layerwise_lmc: the tiers' analyses and checkpoints, the models' layer groups, the barrier table, the random direction, the augmentation
and the deep-linear identities."""
import numpy as np
import pytest
import torch

from replications.layerwise_lmc import analyze_deep_linear as dl
from replications.layerwise_lmc import common, model, train
from replications.layerwise_lmc.analyze_robustness import random_point
from shared.nn.interpolation import layer_groups
from shared.pipeline.paper import load_papers

PAPER = "layerwise_lmc"


@pytest.mark.parametrize("tier", ["quick", "full"])
def test_committed_tiers_declare_every_analysis_and_checkpoint(tier):
    paper = load_papers([PAPER], tier, {})[PAPER]
    assert set(paper.analyses) == {"barriers", "training", "cumulative", "robustness", "deep_linear"}
    specs = common.run_specs(paper.cfg, "mlp_d8", 784, 10)
    assert {s["epoch"] for s in specs} == set(paper.cfg["experiments"]["mlp_d8"]["checkpoints"]) | {
        paper.cfg["train"]["epochs"]}


def test_shared_init_pair_shares_its_init_only():
    cfg = load_papers([PAPER], "quick", {})[PAPER].cfg
    assert len(cfg["seeds"]) == 3  # the quick main run trains three seed pairs (issue 35)
    for pair in range(len(cfg["seeds"])):
        shared = [s for s in common.run_specs(cfg, "shared_d4", 784, 10) if s["pair"] == pair]
        different = [s for s in common.run_specs(cfg, "mlp_d4", 784, 10) if s["pair"] == pair]
        assert len({s["seed"] for s in shared}) == 1 and len({s["order_seed"] for s in shared}) == 2
        assert len({s["seed"] for s in different}) == 2


def test_over_pairs_means_or_keeps_the_worst_pair():
    per_pair = [{"ratio": 0.1, "low": 1.0, "gap": 1e-12}, {"ratio": 0.3, "low": 0.4, "gap": 3e-12}]
    assert common.over_pairs(per_pair, {"low": min, "gap": max}) == {"ratio": pytest.approx(0.2), "low": 0.4,
                                                                      "gap": 3e-12}
    assert np.isnan(common.over_pairs([{"low": float("nan")}, {"low": 1.0}], {"low": min})["low"])


def test_layer_groups_of_the_models():
    spec = {"model": "mlp", "d_input": 784, "width": 16, "depth": 3, "n_classes": 10}
    groups = layer_groups(model.build(spec).state_dict())
    assert list(groups) == ["hidden.0", "hidden.1", "hidden.2", "out"]
    assert groups["hidden.0"] == ["hidden.0.weight", "hidden.0.bias"]
    bil = layer_groups(model.build({**spec, "model": "bilinear", "depth": 2}).state_dict())
    assert list(bil) == ["hidden.0.proj", "hidden.1.proj", "out"]
    net = model.build({"model": "resnet18_nonorm", "n_classes": 10})
    assert len(layer_groups(net.state_dict())) == 21  # 17 convs + 3 downsamples + fc, as Fig. 1's 20 layer rows + fc
    assert not any(isinstance(m, (torch.nn.BatchNorm2d, torch.nn.GroupNorm)) for m in net.modules())
    with torch.no_grad():
        assert net(torch.zeros(2, 3, 32, 32)).shape == (2, 10)


def _pair_and_data():
    torch.manual_seed(0)
    spec = {"model": "mlp", "d_input": 12, "width": 8, "depth": 2, "n_classes": 3}
    a, b = model.build(spec), model.build(spec)
    g = torch.Generator().manual_seed(0)
    data = {"x_train": torch.randn(50, 12, generator=g), "y_train": torch.randint(0, 3, (50,), generator=g),
            "x_test": torch.randn(20, 12, generator=g), "y_test": torch.randint(0, 3, (20,), generator=g)}
    return a, b, data


def test_barrier_table_of_a_model_with_itself_is_zero():
    a, _, data = _pair_and_data()
    ev = common.Evaluator(a, data, torch.device("cpu"), chunk=7)
    state = {k: v.clone() for k, v in a.state_dict().items()}
    table = common.barrier_table(ev, state, state)
    assert table["full"] == {m: 0.0 for m in common.MEASURES}
    assert all(v == {m: 0.0 for m in common.MEASURES} for v in table["layer"].values())
    assert len(table["layer"]) == 2 * 3


def test_barrier_is_against_the_full_models_mean():
    a, b, data = _pair_and_data()
    sa, sb = ({k: v.clone() for k, v in m.state_dict().items()} for m in (a, b))  # the evaluator loads into a
    ev = common.Evaluator(a, data, torch.device("cpu"))
    table = common.barrier_table(ev, sa, sb)
    ref = (ev(sa)["train_loss"] + ev(sb)["train_loss"]) / 2
    mid = {k: (sa[k] + sb[k]) / 2 for k in sa}
    assert table["full"]["train_loss"] == pytest.approx(ev(mid)["train_loss"] - ref, abs=1e-6)
    one = {**sa, "out.weight": (sa["out.weight"] + sb["out.weight"]) / 2, "out.bias": (sa["out.bias"] + sb["out.bias"]) / 2}
    assert table["layer"][("out", "a")]["train_loss"] == pytest.approx(ev(one)["train_loss"] - ref, abs=1e-6)


def test_random_direction_has_half_the_interpolation_norm():
    a, b, _ = _pair_and_data()
    sa, sb = a.state_dict(), b.state_dict()
    keys = ["hidden.1.weight", "hidden.1.bias"]
    point = random_point(sa, sb, keys, torch.Generator().manual_seed(3))
    moved = torch.cat([(point[k] - sa[k]).flatten() for k in keys]).norm()
    target = torch.cat([(sb[k] - sa[k]).flatten() for k in keys]).norm() / 2
    assert moved == pytest.approx(target.item(), rel=1e-5)
    assert all(torch.equal(point[k], sa[k]) for k in sa if k not in keys)


def test_deep_linear_single_layer_cut_is_convex_and_toy_pattern():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 5, generator=g, dtype=torch.float64)
    y = x @ torch.randn(5, 3, generator=g, dtype=torch.float64)
    ws = [torch.randn(5, 6, generator=g, dtype=torch.float64), torch.randn(6, 6, generator=g, dtype=torch.float64),
          torch.randn(6, 3, generator=g, dtype=torch.float64)]
    vs = [torch.randn_like(w) for w in ws]
    alphas = np.linspace(0, 1, 51)
    for k in range(3):
        at = dl.path(ws, vs, alphas, {k}, "a")
        curve = np.array([dl.loss(at(t), x, y) for t in alphas])
        assert np.diff(curve, 2).min() >= -1e-9 * curve.max()
    c = 4.0
    toy = [ws[0] * c, ws[1] / c, ws[2]]
    mid = {k: dl.loss(dl.path(ws, toy, alphas, {k}, "a")(0.5), x, y) for k in range(3)}
    base = dl.loss(ws, x, y)
    f = ((x @ ws[0] @ ws[1] @ ws[2] - y) ** 2).mean()
    assert base == pytest.approx(f.item())
    assert mid[2] == pytest.approx(base)  # W3 is the same in both
    assert mid[0] > mid[1]  # layer 1 scaled by (1 + c) / 2 = 2.5, layer 2 by (1 + 1/c) / 2 = 0.625


def test_full_tier_training_path_runs_on_a_tiny_batch():
    """The ResNet pair's path (SGD with momentum and weight decay, crop + flip, checkpoints 0 and 1) on 8 images."""
    from types import SimpleNamespace

    from shared.io.runtime import generator
    from shared.pipeline.run import derive_seed

    g = torch.Generator().manual_seed(0)
    data = {"x_train": torch.randn(8, 3, 32, 32, generator=g), "y_train": torch.randint(0, 10, (8,), generator=g),
            "x_test": torch.randn(4, 3, 32, 32, generator=g), "y_test": torch.randint(0, 10, (4,), generator=g)}
    run = SimpleNamespace(generator=lambda base, stream, device="cpu": generator(derive_seed(base, stream), device))
    specs = [{"model": "resnet18_nonorm", "n_classes": 10, "role": "a", "epoch": e, "order_seed": 0} for e in (0, 1)]
    t = {"optimizer": "sgd", "lr": 0.05, "momentum": 0.9, "weight_decay": 5e-4, "batch_size": 4, "epochs": 1,
         "augment": True}
    torch.manual_seed(0)
    states, history = train.train_one(model.build(specs[0]), specs, t, data, run, torch.device("cpu"))
    assert sorted(states) == [0, 1] and len(history) == 1 and np.isfinite(history[0]["train_loss"])
    assert not torch.equal(states[0]["conv1.weight"], states[1]["conv1.weight"])
