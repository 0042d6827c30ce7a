"""Datasets of small MLP weights: implicit neural representations (INRs) fitted many at once on one device.
fit_inrs keeps its own five-line loop, not shared.train.loop.fit: data may not import train (test_layering.py).

An INR is a sine MLP f(x) = W_M s(... s(W_1 x + b_1) ...) + b_M with s(z) = sin(w0 z), the SIREN variant of
Navon et al.'s code (nn/inr.py): every layer initialised U(+-sqrt(6 / fan_in) / w0), biases zero. N INRs are one
stacked model: parameters carry a leading INR axis, the forward is batched matmuls, one Adam optimises all. The loss
is the SUM over INRs of each one's mean squared error, so each INR's gradient is its own, and Adam (elementwise)
takes for each the steps it would take alone: stacked fitting equals one-by-one fitting up to float rounding (the
gradients agree to 1e-16 in float64). That rounding grows fast: Adam multiplies the rounding of a gradient near its
eps by lr / eps, and the w0 = 30 sine network amplifies it each step, so after a hundred steps the two sets of
weights differ by ~0.1 while both fit equally well (results/benchmarks/dwsnets.json measures both).

`sine_targets` makes the paper's sine-regression data (sin(b x) on [-pi, pi], b ~ U(0.5, 10), predict b).
"""
import math
from itertools import pairwise

import torch

from shared.io.smoke import capped


def init_inrs(n, widths, w0, generator):
    """Stacked weights [(n, d_m, d_{m-1})] and biases [(n, d_m)] for layer widths d_0 .. d_M, drawn from `generator`."""
    weights, biases = [], []
    for a, b in pairwise(widths):
        bound = math.sqrt(6 / a) / w0
        weights.append((torch.rand(n, b, a, generator=generator, dtype=torch.float64) * 2 - 1) * bound)
        biases.append(torch.zeros(n, b, dtype=torch.float64))
    return weights, biases


def inr_forward(weights, biases, coords, w0):
    """Outputs (n, P, d_M) of n stacked INRs at coords (P, d_0) (shared) or (n, P, d_0)."""
    x = coords.expand(weights[0].shape[0], *coords.shape[-2:]) if coords.dim() == 2 else coords
    for m, (w, b) in enumerate(zip(weights, biases)):
        x = torch.baddbmm(b.unsqueeze(1), x, w.transpose(1, 2))
        if m < len(weights) - 1:
            x = torch.sin(w0 * x)
    return x


def fit_inrs(coords, targets, hidden, n_hidden_layers=2, w0=30.0, steps=500, lr=1e-3, seed=0, device="cpu",
             dtype=torch.float32, init=None):
    """Fit one INR per row of `targets` (n, P, d_out) at `coords` (P, d_in); returns (weights, biases, mse) as CPU
    tensors of `dtype`: weights[m] (n, d_m, d_{m-1}), biases[m] (n, d_m), mse (n,) at the end.
    `init` (weights, biases) overrides the seeded initialisation (the tests fit slices of one init one by one)."""
    widths = [coords.shape[-1]] + [hidden] * n_hidden_layers + [targets.shape[-1]]
    if init is None:
        init = init_inrs(len(targets), widths, w0, torch.Generator().manual_seed(seed))
    params = [t.to(device=device, dtype=dtype).clone().requires_grad_() for t in init[0] + init[1]]
    coords, targets = coords.to(device=device, dtype=dtype), targets.to(device=device, dtype=dtype)
    m = len(widths) - 1
    opt = torch.optim.Adam(params, lr=lr)
    for _ in capped(range(steps), steps, "fit_inrs"):
        opt.zero_grad(set_to_none=True)
        loss = ((inr_forward(params[:m], params[m:], coords, w0) - targets) ** 2).mean((1, 2)).sum()
        loss.backward()
        opt.step()
    with torch.no_grad():
        mse = ((inr_forward(params[:m], params[m:], coords, w0) - targets) ** 2).mean((1, 2))
    out = [p.detach().cpu() for p in params]
    return out[:m], out[m:], mse.cpu()


def sine_targets(n, points, seed, low=0.5, high=10.0):
    """(coords (P, 1) on [-pi, pi], targets sin(b x) (n, P, 1), frequencies b (n,) ~ U(low, high)), seeded."""
    gen = torch.Generator().manual_seed(seed)
    freq = low + (high - low) * torch.rand(n, generator=gen, dtype=torch.float64)
    x = torch.linspace(-math.pi, math.pi, points, dtype=torch.float64)
    return x[:, None], torch.sin(freq[:, None] * x[None, :])[..., None], freq


def image_targets(images, side):
    """(coords (side*side, 2) on the [-1, 1]^2 grid, targets (n, side*side, 1)) of images (n, side*side) in [0, 1]."""
    axis = torch.linspace(-1, 1, side, dtype=torch.float64)
    grid = torch.stack(torch.meshgrid(axis, axis, indexing="ij"), -1).reshape(-1, 2)
    return grid, torch.as_tensor(images, dtype=torch.float64).reshape(len(images), -1, 1)


def to_arrays(weights, biases, **extra):
    """{name: numpy array} for a safetensors/npz file: w1.., b1.., and any extra arrays (targets, mse)."""
    out = {f"w{m}": w.numpy() for m, w in enumerate(weights, start=1)}
    out.update({f"b{m}": b.numpy() for m, b in enumerate(biases, start=1)})
    out.update({k: torch.as_tensor(v).numpy() for k, v in extra.items()})
    return out


def from_arrays(arrays):
    """(weights, biases) as float32 tensors from `to_arrays`' layout."""
    m = sum(1 for k in arrays if k.startswith("w") and k[1:].isdigit())
    return ([torch.as_tensor(arrays[f"w{i}"]).float() for i in range(1, m + 1)],
            [torch.as_tensor(arrays[f"b{i}"]).float() for i in range(1, m + 1)])
