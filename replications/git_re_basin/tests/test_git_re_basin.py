"""git_re_basin: the counterexample's endpoints, matching on small random MLPs, barrier forms."""
import pytest
import torch

from replications.git_re_basin import counterexample, model
from shared.nn.interpolation import copy_state
from shared.nn.permutation import apply_permutation, invert, random_permutation, weight_matching

PAPER = "git_re_basin"


def test_counterexample_endpoints_perfect_and_every_permutation_has_a_barrier():
    curves = counterexample.accuracy_curves(100.0, 0.01, 2000, 0, torch.linspace(0, 1, 9))
    assert len(curves) == 4
    for row in curves.values():
        assert min(row[0], row[-1]) > 0.98 and min(row) < 0.9


@pytest.mark.parametrize("kind", ["relu", "bilinear"])
def test_permuted_model_same_function_and_planted_recovered(kind):
    torch.manual_seed(0)
    net = model.build({"kind": kind, "d_input": 6, "d_hidden": 8, "n_hidden": 3, "n_classes": 3}).double()
    spec, state = net.spec(), copy_state(net)
    pi = random_permutation(spec, state, torch.Generator().manual_seed(1))
    x = torch.randn(5, 6, dtype=torch.float64)
    before = net(x)
    net.load_state_dict(apply_permutation(spec, pi, state))
    assert torch.allclose(net(x), before, atol=1e-12)
    found, _ = weight_matching(spec, state, apply_permutation(spec, pi, state))
    assert all(torch.equal(found[k], v) for k, v in invert(pi).items())


def test_state_is_a_copy():
    net = model.build({"d_input": 4, "d_hidden": 3, "n_hidden": 1, "n_classes": 2})
    saved = copy_state(net)
    with torch.no_grad():
        net.fc[0].weight.zero_()
    assert saved["fc.0.weight"].abs().sum() > 0
