"""shared.nn.layer_rotation and shared.train.layca against their formulas: the rotation is scipy's cosine distance
of each flattened kernel (biases and BatchNorm left out); a Layca step, written out by hand as the official layca(),
keeps the norm, turns by arctan(rate) whatever the gradient's scale, and freezes every non-kernel parameter;
the alpha multipliers are the official get_learning_rate_multipliers."""
import math

import pytest
import torch
from scipy.spatial.distance import cosine
from torch import nn

from shared.nn.layer_rotation import kernels, layer_rotation, snapshot
from shared.train.layca import Layca, alpha_multipliers


def mlp(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(6, 5), nn.BatchNorm1d(5), nn.ReLU(), nn.Conv1d(1, 2, 3), nn.Flatten(),
                         nn.Linear(6, 3)).double()


class Net(nn.Module):  # mlp with the conv applied to a channel axis
    def __init__(self, seed=0):
        super().__init__()
        self.body = mlp(seed)

    def forward(self, x):
        h = self.body[2](self.body[1](self.body[0](x)))
        return self.body[5](self.body[4](self.body[3](h[:, None, :])))


def test_kernels_are_the_weights_in_order():
    model = mlp()
    assert [name for name, _ in kernels(model)] == ["0.weight", "3.weight", "5.weight"]


def test_rotation_is_scipys_cosine_distance():
    model = mlp()
    init = snapshot(model)
    assert all(v == pytest.approx(0, abs=1e-15) for v in layer_rotation(model, init).values())
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p))
    rot = layer_rotation(model, init)
    for name, p in kernels(model):
        assert rot[name] == pytest.approx(cosine(p.detach().flatten().numpy(), init[name].flatten().numpy()),
                                          abs=1e-14)
    with torch.no_grad():  # opposite direction at another scale: 2
        model[0].weight.copy_(-3.0 * init["0.weight"])
    assert layer_rotation(model, init)["0.weight"] == pytest.approx(2.0, abs=1e-14)


def test_rotation_names_missing_kernels():
    with pytest.raises(ValueError, match="lack the kernels"):
        layer_rotation(mlp(), {})


def hand_layca(p, step, rate):
    """The official layca(p, step, lr), line by line."""
    norm = p.norm()
    step = step - (step * p).sum() * p / norm ** 2
    step = step / step.norm() * norm
    new = p - rate * step
    return new / new.norm() * norm


@pytest.mark.parametrize("base", ["sgd", "adam"])
def test_layca_step_is_the_official_formula(base):
    model = Net()
    ks = [p for _, p in kernels(model)]
    others = [p for p in model.parameters() if p.ndim < 2]
    rates = [0.3, 0.05, 0.01]
    groups = [{"params": [p], "lr": r} for p, r in zip(ks, rates)] + [{"params": others}]
    inner = torch.optim.SGD(groups, lr=0.1, momentum=0.9) if base == "sgd" else torch.optim.Adam(groups, lr=0.1)
    ref = torch.optim.SGD([{"params": [nn.Parameter(p.detach().clone())]} for p in ks], lr=1.0, momentum=0.9) if base == "sgd" else \
        torch.optim.Adam([{"params": [nn.Parameter(p.detach().clone())]} for p in ks], lr=1.0)  # the base's update at rate 1, by hand
    opt = Layca(inner, ks)
    before_others = [p.detach().clone() for p in others]
    x, y = torch.randn(8, 6, dtype=torch.float64), torch.randint(0, 3, (8,))
    for _ in range(3):
        old = [p.detach().clone() for p in ks]
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        for q, p in zip((g["params"][0] for g in ref.param_groups), ks):
            q.data.copy_(p.data)
            q.grad = p.grad.clone()
        ref.step()
        opt.step()
        for p, o, q, r in zip(ks, old, (g["params"][0] for g in ref.param_groups), rates):
            want = hand_layca(o, o - q.detach(), r)
            torch.testing.assert_close(p.detach(), want, rtol=1e-12, atol=1e-12)
            u, v = o.flatten() / o.norm(), p.detach().flatten() / p.detach().norm()
            assert math.atan2(float((v - (v @ u) * u).norm()), float(v @ u)) == pytest.approx(math.atan(r), rel=1e-9)
            assert float(p.detach().norm()) == pytest.approx(float(o.norm()), rel=1e-12)
    for p, b in zip(others, before_others):
        assert torch.equal(p.detach(), b)  # frozen, as the official code
    assert all(g["lr"] == r for g, r in zip(opt.param_groups, rates))  # the rates are restored after the base step


def test_layca_turn_ignores_the_gradient_scale():
    torch.manual_seed(0)
    turns = []
    for scale in (1e-3, 1e3):
        w = nn.Parameter(torch.randn(4, 5, dtype=torch.float64))
        opt = Layca(torch.optim.SGD([w], lr=0.1), [w])
        old = w.detach().clone()
        (scale * (w ** 3).sum()).backward()
        opt.step()
        turns.append(cosine(w.detach().flatten().numpy(), old.flatten().numpy()))
    assert turns[0] == pytest.approx(turns[1], rel=1e-9)
    assert turns[0] == pytest.approx(1 - math.cos(math.atan(0.1)), rel=1e-9)


def test_layca_refuses_kernels_outside_the_optimizer():
    w, v = nn.Parameter(torch.ones(2, 2)), nn.Parameter(torch.ones(2, 2))
    with pytest.raises(ValueError, match="base optimizer"):
        Layca(torch.optim.SGD([w], lr=0.1), [v])


def test_alpha_multipliers_are_the_official_formula():
    assert alpha_multipliers(5, 0.0) == [1.0] * 5
    up = alpha_multipliers(5, 0.8)  # first layers slowed, down to (1 - 0.8)^5
    assert up[0] == pytest.approx(0.2 ** 5) and up[-1] == 1.0 and up == sorted(up)
    assert up[2] == pytest.approx(0.2 ** 2.5)
    down = alpha_multipliers(5, -0.6)  # last layers slowed, down to (1 - 0.6)^5
    assert down[0] == 1.0 and down[-1] == pytest.approx(0.4 ** 5) and down == sorted(down, reverse=True)
    assert alpha_multipliers(1, 0.5) == [1.0]
    with pytest.raises(ValueError, match="alpha"):
        alpha_multipliers(3, 1.0)
