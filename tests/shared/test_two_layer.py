"""shared.nn.two_layer, shared.nn.feature_learning and shared.data.hypercube against their formulas: the stacked
network is sum_k a_k relu(w_k . x) per run, its runs train independently, the feature statistics of known vectors,
and the XOR labels."""
import math

import pytest
import torch

from shared.data.hypercube import hypercube_parity, parity_label
from shared.nn.feature_learning import feature_projection, xor_features
from shared.nn.two_layer import StackedTwoLayerReLU


def test_forward_is_the_formula_per_run():
    net = StackedTwoLayerReLU(3, 5, 4, 1.0, torch.Generator().manual_seed(0)).double()
    x = torch.randn(7, 5, dtype=torch.float64)
    per_run = torch.randn(3, 7, 5, dtype=torch.float64)
    for r in range(3):
        want = sum(net.a[r, k] * torch.relu(x @ net.W[r, k]) for k in range(4))
        assert torch.allclose(net(x)[r], want, atol=1e-12)
        want = sum(net.a[r, k] * torch.relu(per_run[r] @ net.W[r, k]) for k in range(4))
        assert torch.allclose(net(per_run)[r], want, atol=1e-12)


def test_init_scale_and_symmetric_second_layer():
    net = StackedTwoLayerReLU(4, 400, 50, 0.01, torch.Generator().manual_seed(1))
    assert torch.allclose(net.a.abs(), torch.full_like(net.a, 0.01))
    assert abs(net.W.norm(dim=-1).mean().item() - 0.01) < 1e-3  # ||w|| about s


def test_stacked_sgd_is_each_run_alone():
    gen = torch.Generator().manual_seed(2)
    net = StackedTwoLayerReLU(3, 6, 5, 0.5, gen)
    alone = StackedTwoLayerReLU(1, 6, 5, 0.5)
    alone.load_state_dict({"W": net.W[1:2].detach().clone(), "a": net.a[1:2].detach().clone()})
    opt, opt1 = (torch.optim.SGD(m.parameters(), lr=0.3) for m in (net, alone))
    for _ in range(5):
        x = torch.randn(3, 8, 6, generator=gen)
        y = torch.sign(torch.randn(3, 8, generator=gen))
        for model, o, xb, yb in ((net, opt, x, y), (alone, opt1, x[1:2], y[1:2])):
            o.zero_grad()
            torch.nn.functional.softplus(-yb * model(xb)).mean(1).sum().backward()
            o.step()
    assert torch.allclose(net.W[1], alone.W[0], atol=1e-6) and torch.allclose(net.a[1], alone.a[0], atol=1e-6)


def test_freeze_first_layer():
    net = StackedTwoLayerReLU(2, 3, 4, 1.0, freeze_first=True)
    assert not net.W.requires_grad and net.a.requires_grad


def test_feature_projection_of_known_vectors():
    basis, features = xor_features(4)
    W = torch.tensor([[1.0, 1.0, 0.0, 0.0],      # a feature direction: cos 1, no orthogonal part
                      [1.0, -1.0, 2.0, 0.0],     # in-plane along (e1 - e2), orthogonal norm 2
                      [0.0, 0.0, 0.0, 3.0]])     # no signal
    s = feature_projection(W, basis, features)
    assert torch.allclose(s["signal"], torch.tensor([math.sqrt(2), math.sqrt(2), 0.0]))
    assert torch.allclose(s["orthogonal"], torch.tensor([0.0, 2.0, 3.0]))
    assert torch.allclose(s["cos"][:2], torch.tensor([1.0, math.sqrt(2) / math.sqrt(6)]))
    assert s["nearest"][:2].tolist() == [0, 2]
    assert torch.allclose(s["plane_cos"][:2], torch.ones(2))
    assert s["ratio"][2] == 0


def test_xor_labels_and_nested_draws():
    x, y = hypercube_parity(10, 50, (2, 5), torch.Generator().manual_seed(3))
    assert set(x.unique().tolist()) == {-1.0, 1.0} and torch.equal(y, -x[:, 2] * x[:, 5])
    prefix, _ = hypercube_parity(10, 20, (2, 5), torch.Generator().manual_seed(3))
    assert torch.equal(prefix, x[:20])
    assert torch.equal(parity_label(x, (0, 1, 2)), x[:, 0] * x[:, 1] * x[:, 2])


@pytest.mark.parametrize("support", [(0, 0), (0, 10), ()])
def test_bad_support_is_refused(support):
    with pytest.raises(ValueError, match="support"):
        hypercube_parity(10, 5, support)

