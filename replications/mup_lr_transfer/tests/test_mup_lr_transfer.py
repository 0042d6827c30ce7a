"""Fast checks of the model and the closed form (bad configs: tests/bad_config.yaml; the conformance suite renders the
report)."""
import numpy as np
import pytest
import torch

from replications.mup_lr_transfer.common import eta_inf, kernel, make_data
from replications.mup_lr_transfer.model import build, gd_losses, hidden_grads, one_step_output
from shared.train.lr_sweep import evaluate_polynomial, minimise_on_grid, step_polynomial

DATA = {"m": 16, "d": 4, "noise": 0.1, "seed": 123}


def model(scheme, n=32, depth=2, seed=0):
    return build({"scheme": scheme, "n": n, "depth": depth, "d": DATA["d"]}).init(torch.Generator().manual_seed(seed))


def test_init_variances_and_lr_multipliers():
    for scheme, v_std in (("mup", 1 / 32), ("sp", 32 ** -0.5), ("ntp", 32 ** -0.5)):
        net = model(scheme)
        stds = {r["name"]: r["init_std"] for r in net.rows}
        assert stds["v.weight"] == pytest.approx(v_std) and stds["w1.weight"] == pytest.approx(32 ** -0.5)
        assert stds["w0.weight"] == pytest.approx(DATA["d"] ** -0.5)
        assert net.lr_mults() == pytest.approx([1 / 32] * 2 if scheme == "ntp" else [1.0] * 2)
        assert not net.w0.weight.requires_grad and not net.v.weight.requires_grad


def test_step_polynomial_matches_direct_step_and_gd():
    x, y = make_data(DATA)
    net = model("mup", depth=3)
    grads = hidden_grads(net, x, y)
    poly = step_polynomial(lambda e: one_step_output(net, x, grads, e).numpy(), 3, 2.0)
    direct = one_step_output(net, x, grads, 1.234).numpy()
    assert np.allclose(evaluate_polynomial(poly, [1.234])[0], direct, rtol=1e-10, atol=1e-12)
    loss_direct = 0.5 * ((direct - y.numpy()) ** 2).mean()
    assert gd_losses(net, x, y, 1.234, 2)[0] == pytest.approx(loss_direct, rel=1e-10)
    assert np.allclose(poly[0], net(x).detach().numpy())  # phi_0 is the output at init


def test_eta_inf_minimises_the_limit_loss():
    x, y = make_data(DATA)
    depth, m = 3, DATA["m"]
    ky = (kernel(x) @ y).numpy()
    yy = y.numpy()

    def loss(etas):
        return 0.5 * ((yy[None] - etas[:, None] * depth / m * ky[None]) ** 2).mean(axis=1)

    best, _ = minimise_on_grid(loss, 1e-4, 1e3)
    assert best == pytest.approx(eta_inf(x, y, depth), rel=1e-5)
