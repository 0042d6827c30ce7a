"""Helpers moved into shared/ from papers' requests: pgd_linf (harmless_perturbations), random_direction_like
(layerwise_lmc) and ConstantGate (equivalent_linear_mappings), each on a small real case."""
import pytest
import torch
from torch import nn

from shared.nn.adversarial import pgd_linf
from shared.nn.dynamic_linear import ConstantGate, dynamic_linear_map
from shared.nn.interpolation import random_direction_like


def test_pgd_stays_in_the_ball_and_range_and_fgsm_moves_every_pixel_by_eps():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    x, y = torch.rand(5, 8) * 0.8 + 0.1, torch.randint(0, 3, (5,))
    for steps in (1, 7):
        x_adv = pgd_linf(net, x, y, 0.05, steps)
        assert (x_adv - x).abs().max() <= 0.05 + 1e-6 and 0 <= x_adv.min() and x_adv.max() <= 1
    fgsm = pgd_linf(net, x, y, 0.05, 1)
    assert torch.allclose((fgsm - x).abs(), torch.full_like(x, 0.05), atol=1e-6)  # inside the range: a full step
    loss = nn.functional.cross_entropy
    assert loss(net(pgd_linf(net, x, y, 0.05, 7)), y) > loss(net(x), y)


def test_random_direction_has_the_norm_and_the_old_draws():
    state = {"w": torch.randn(3, 4), "b": torch.randn(3), "other": torch.randn(2)}
    direction = random_direction_like(state, ["w", "b"], torch.tensor(2.5, dtype=torch.float64),
                                      torch.Generator().manual_seed(1))
    assert set(direction) == {"w", "b"} and direction["w"].dtype == torch.float64
    assert torch.cat([v.flatten() for v in direction.values()]).norm().item() == pytest.approx(2.5)
    g = torch.Generator().manual_seed(1)  # layerwise_lmc's own draw order: one randn per key, in order
    noise = [torch.randn(3, 4, generator=g, dtype=torch.float64), torch.randn(3, generator=g, dtype=torch.float64)]
    assert torch.allclose(direction["w"] / direction["w"].norm(), noise[0] / noise[0].norm())


def test_a_constant_gate_makes_a_function_factor_part_of_the_linear_map():
    class SoftmaxMix(nn.Module):  # softmax(x) * x: the softmax is a function, frozen through a ConstantGate
        def __init__(self):
            super().__init__()
            self.gate = ConstantGate()

        def forward(self, x):
            return self.gate(torch.softmax(x, -1)) * x

    model, x = SoftmaxMix(), torch.randn(4, 5, dtype=torch.float64)
    linear = dynamic_linear_map(model, x)  # checks W(x) x + b(x) == f(x)
    assert torch.allclose(linear.weight, torch.diag_embed(torch.softmax(x, -1)), atol=1e-12)
