"""shared.data.inr: seeded determinism, stacked fitting = one-by-one fitting, and the fit quality of sine INRs."""
import torch

from shared.data.inr import fit_inrs, from_arrays, init_inrs, inr_forward, sine_targets, to_arrays



def test_same_seed_same_weights():
    coords, targets, _ = sine_targets(4, 32, seed=0)
    a = fit_inrs(coords, targets, 8, steps=5, seed=3)
    b = fit_inrs(coords, targets, 8, steps=5, seed=3)
    c = fit_inrs(coords, targets, 8, steps=5, seed=4)
    assert all(torch.equal(x, y) for x, y in zip(a[0] + a[1], b[0] + b[1]))
    assert not torch.equal(a[0][1], c[0][1])
    assert torch.equal(sine_targets(4, 32, seed=0)[1], targets)


def test_stacked_equals_one_by_one():
    """Each INR's gradient is its own (summed loss): equal to rounding in float64, and so is one Adam step. (Later
    steps amplify the rounding of gradients near Adam's eps: see the module docstring.)"""
    coords, targets, _ = sine_targets(4, 48, seed=1)
    init = init_inrs(4, [1, 8, 8, 1], 30.0, torch.Generator().manual_seed(0))
    loss = lambda w, b, t: ((inr_forward(w, b, coords, 30.0) - t) ** 2).mean((1, 2)).sum()
    params = [t.clone().requires_grad_() for t in init[0] + init[1]]
    grads = torch.autograd.grad(loss(params[:3], params[3:], targets), params)
    stacked = fit_inrs(coords, targets, 8, steps=1, init=init, dtype=torch.float64)
    for k in range(4):
        mine = [t[k:k + 1].clone().requires_grad_() for t in init[0] + init[1]]
        for g, h in zip(torch.autograd.grad(loss(mine[:3], mine[3:], targets[k:k + 1]), mine), grads):
            assert torch.allclose(g, h[k:k + 1], rtol=0, atol=1e-12)
        one = fit_inrs(coords, targets[k:k + 1], 8, steps=1, dtype=torch.float64,
                       init=([w[k:k + 1] for w in init[0]], [b[k:k + 1] for b in init[1]]))
        for x, y in zip(one[0] + one[1], stacked[0] + stacked[1]):
            assert torch.allclose(x, y[k:k + 1], rtol=0, atol=1e-9)


def test_fitted_inrs_reach_low_mse_and_round_trip():
    coords, targets, _ = sine_targets(8, 96, seed=2)
    w, b, mse = fit_inrs(coords, targets, 16, steps=200, lr=2e-3, seed=0)
    assert mse.max() < 0.01  # sin(b x) has variance ~0.5: the fits explain > 98% of it
    assert torch.allclose(((inr_forward(w, b, coords.float(), 30.0) - targets.float()) ** 2).mean((1, 2)), mse)
    w2, b2 = from_arrays(to_arrays(w, b, target=torch.zeros(8)))
    assert all(torch.equal(x, y) for x, y in zip(w + b, w2 + b2))
