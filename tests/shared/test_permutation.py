"""Permutation specs, matching and interpolation: a permuted model computes the same function (MLP, bilinear and
conv + norm specs), weight and activation matching recover a planted permutation, the barrier's two forms."""
import pytest
import torch
from torch import nn

from shared.nn.bilinear import Bilinear
from shared.nn.interpolation import barrier, interpolate, layer_groups, loss_curve
from shared.nn.permutation import (PermutationSpec, activation_matching, apply_permutation, bilinear_mlp_spec,
                                   collect_activations, conv, dense, invert, matching_objective, mlp_spec, norm,
                                   random_permutation, ste_matching, weight_matching)


class MLP(nn.Module):
    def __init__(self, widths):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(widths[:-1], widths[1:]))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            x = torch.relu(x) if i < len(self.layers) - 1 else x
        return x


class BilinearNet(nn.Module):
    def __init__(self, widths, bias):
        super().__init__()
        self.hidden = nn.ModuleList(Bilinear(a, b, bias=bias) for a, b in zip(widths[:-2], widths[1:-1]))
        self.readout = nn.Linear(widths[-2], widths[-1])

    def forward(self, x):
        for layer in self.hidden:
            x = layer(x)
        return self.readout(x)


class ConvNet(nn.Module):
    """conv -> per-sample norm over (C, H, W) with per-channel affine -> relu, twice, then a dense readout."""
    def __init__(self, c=6):
        super().__init__()
        self.conv1, self.norm1 = nn.Conv2d(3, c, 3, padding=1), nn.GroupNorm(1, c)
        self.conv2, self.norm2 = nn.Conv2d(c, c, 3, padding=1), nn.GroupNorm(1, c)
        self.head = nn.Linear(c, 4)

    def forward(self, x):
        x = torch.relu(self.norm1(self.conv1(x)))
        x = torch.relu(self.norm2(self.conv2(x)))
        return self.head(x.mean((2, 3)))


def conv_spec():
    return PermutationSpec({**conv("conv1", "C1", None), **norm("norm1", "C1"), **conv("conv2", "C2", "C1"),
                            **norm("norm2", "C2"), **dense("head", None, "C2")})


def variants():
    torch.manual_seed(0)
    mlp = MLP([5, 7, 6, 3])
    bil = BilinearNet([5, 7, 6, 3], bias=True)
    for p in bil.parameters():  # non-zero biases so that a wrong bias permutation shows
        nn.init.normal_(p)
    return {
        "mlp": (mlp, mlp_spec(["layers.0", "layers.1", "layers.2"]), torch.randn(11, 5)),
        "bilinear": (bil, bilinear_mlp_spec(["hidden.0", "hidden.1"], "readout", bilinear_bias=True),
                     torch.randn(11, 5)),
        "conv_norm": (ConvNet(), conv_spec(), torch.randn(4, 3, 5, 5)),
    }


@pytest.mark.parametrize("variant", ["mlp", "bilinear", "conv_norm"])
def test_permuted_model_computes_the_same_function(variant):
    model, spec, x = variants()[variant]
    before = model(x)
    state = {k: v.clone() for k, v in model.state_dict().items()}
    perm = random_permutation(spec, state, torch.Generator().manual_seed(1))
    assert any((p != torch.arange(len(p))).any() for p in perm.values())
    model.load_state_dict(apply_permutation(spec, perm, state))
    assert torch.allclose(model(x), before, atol=1e-5)
    assert not torch.equal(model.state_dict()[next(iter(spec.axes))], state[next(iter(spec.axes))])


@pytest.mark.parametrize("variant", ["mlp", "bilinear", "conv_norm"])
def test_weight_matching_recovers_a_planted_permutation(variant):
    model, spec, _ = variants()[variant]
    state = {k: v.double() for k, v in model.state_dict().items()}
    planted = random_permutation(spec, state, torch.Generator().manual_seed(2))
    found, sweeps = weight_matching(spec, state, apply_permutation(spec, planted, state), seed=3)
    expected = invert(planted)
    assert all(torch.equal(found[k], expected[k]) for k in expected)
    assert sweeps <= 5  # the paper: 3-4 passes; the last sweep only confirms
    aligned = apply_permutation(spec, found, apply_permutation(spec, planted, state))
    assert all(torch.equal(aligned[k], state[k]) for k in state)


def test_weight_matching_never_lowers_the_objective():
    torch.manual_seed(4)
    spec = mlp_spec(["layers.0", "layers.1", "layers.2"])
    a, b = MLP([5, 9, 9, 3]).state_dict(), MLP([5, 9, 9, 3]).state_dict()
    ident = {k: torch.arange(n) for k, n in spec.sizes(b).items()}
    found, _ = weight_matching(spec, a, b, seed=0)
    assert matching_objective(spec, a, b, found) >= matching_objective(spec, a, b, ident) - 1e-9


def test_activation_matching_recovers_a_planted_permutation():
    model, spec, x = variants()["mlp"]
    state = model.state_dict()
    planted = random_permutation(spec, state, torch.Generator().manual_seed(5))
    twin = MLP([5, 7, 6, 3])
    twin.load_state_dict(apply_permutation(spec, planted, state))
    modules = {"P0": "layers.0", "P1": "layers.1"}
    found = activation_matching(collect_activations(model, x, modules), collect_activations(twin, x, modules))
    assert all(torch.equal(found[k], invert(planted)[k]) for k in found)


def test_ste_matching_from_a_permuted_copy_returns_the_inverse():
    model, spec, x = variants()["mlp"]
    state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    planted = random_permutation(spec, state, torch.Generator().manual_seed(6))
    batches = [(x, torch.randint(0, 3, (len(x),), generator=torch.Generator().manual_seed(7)))] * 3
    found, losses = ste_matching(model, spec, state, apply_permutation(spec, planted, state), batches,
                                 nn.functional.cross_entropy, lr=1e-3)
    assert len(losses) == 3 and all(torch.equal(found[k], invert(planted)[k]) for k in found)


def test_spec_rejects_inconsistent_sizes():
    spec = PermutationSpec({**dense("a", "P", None), **dense("b", None, "P")})
    with pytest.raises(ValueError, match="permutation 'P'"):
        spec.sizes({"a.weight": torch.zeros(4, 3), "a.bias": torch.zeros(4), "b.weight": torch.zeros(2, 5),
                    "b.bias": torch.zeros(2)})


def test_interpolation_and_layer_groups():
    a, b = MLP([3, 4, 2]).state_dict(), MLP([3, 4, 2]).state_dict()
    assert list(layer_groups(a)) == ["layers.0", "layers.1"]
    mid = interpolate(a, b, 0.5)
    assert torch.allclose(mid["layers.1.bias"], (a["layers.1.bias"] + b["layers.1.bias"]) / 2)
    one = interpolate(a, b, 1.0, keys=layer_groups(a)["layers.0"])
    assert torch.equal(one["layers.0.weight"], b["layers.0.weight"])
    assert torch.equal(one["layers.1.weight"], a["layers.1.weight"])
    assert torch.equal(interpolate(a, b, 0.3, keys=[], base="b")["layers.0.weight"], b["layers.0.weight"])
    model = MLP([3, 4, 2])
    curve = loss_curve(model, a, b, [0.0, 1.0], lambda m: float(m.layers[0].weight.sum()))
    assert curve == [pytest.approx(float(a["layers.0.weight"].sum())), pytest.approx(float(b["layers.0.weight"].sum()))]


def test_barrier_forms():
    lams = [0.0, 0.5, 1.0]
    assert barrier([1.0, 2.0, 1.0], lams) == pytest.approx(1.0)
    assert barrier([1.0, 2.0, 1.0], lams, "chord") == pytest.approx(1.0)
    # unequal endpoints: the mean form measures from their mean, the chord from the line between them
    assert barrier([0.0, 1.5, 2.0], lams) == pytest.approx(1.0)
    assert barrier([0.0, 1.5, 2.0], lams, "chord") == pytest.approx(0.5)
    assert barrier([1.0, 0.5, 1.0], lams, "chord") == pytest.approx(0.0)  # endpoints count: never negative
    assert barrier([1.3], [0.5], reference=1.0) == pytest.approx(0.3)
    with pytest.raises(ValueError, match="start at 0"):
        barrier([1.0, 2.0], [0.2, 1.0])
