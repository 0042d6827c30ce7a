"""Optimisation diagnostics for any small torch model and loss closure (Ahn et al. 2024; Jiang et al. 2022;
Zhang et al. 2020): stochastic-gradient noise, the exact Hessian diagonal and its robust condition number,
directional smoothness along a direction, and tail statistics of the noise.

Conventions: `loss_fn(model, batch) -> scalar loss`, `sample_batch(size, generator) -> batch`. Parameters are the
model's trainable ones, flattened in `model.parameters()` order.
"""
import math

import torch


def trainable(model):
    return [p for p in model.parameters() if p.requires_grad]


def flat_grad(model, loss, create_graph=False):
    """The gradient of `loss` w.r.t. the model's trainable parameters, as one flat vector."""
    grads = torch.autograd.grad(loss, trainable(model), create_graph=create_graph, allow_unused=True)
    return torch.cat([(g if g is not None else torch.zeros_like(p)).reshape(-1)
                      for g, p in zip(grads, trainable(model))])


def gradient(model, loss_fn, batch):
    return flat_grad(model, loss_fn(model, batch)).detach()


def gradient_noise_samples(model, loss_fn, sample_batch, batch, full_batch, samples, generator, chunk=None,
                           return_vectors=False):
    """`samples` draws of ||g_B - g_full||: g_B the gradient on a fresh mini-batch of `batch` examples, g_full the
    gradient on `full_batch` examples (averaged over chunks of `chunk`, default `batch`, so memory stays small).
    Returns the norms (float64 tensor), and the noise vectors (samples, parameters) when `return_vectors`."""
    chunk = chunk or batch
    sizes = [chunk] * (full_batch // chunk) + ([full_batch % chunk] if full_batch % chunk else [])
    g_full = sum(gradient(model, loss_fn, sample_batch(s, generator)).double() * s for s in sizes) / full_batch
    vectors = torch.stack([gradient(model, loss_fn, sample_batch(batch, generator)).double() - g_full
                           for _ in range(samples)])
    norms = vectors.norm(dim=1)
    return (norms, vectors) if return_vectors else norms


def hessian_diagonal(model, loss):
    """The exact diagonal of the Hessian of `loss` (built from the model's parameters) w.r.t. its trainable
    parameters: one Hessian-vector product per parameter (cheap for models of a few hundred parameters)."""
    params = trainable(model)
    grad = flat_grad(model, loss, create_graph=True)
    diag = torch.empty_like(grad)
    for i in range(grad.numel()):
        row = torch.autograd.grad(grad[i], params, retain_graph=True, allow_unused=True)
        offset = 0
        for g, p in zip(row, params):
            if offset <= i < offset + p.numel():
                diag[i] = 0.0 if g is None else g.reshape(-1)[i - offset]
                break
            offset += p.numel()
    return diag.detach()


def robust_condition_number(diagonal):
    """R_med = max_i |H_ii| / median_i |H_ii| (Jiang et al. 2022), from a Hessian diagonal."""
    a = diagonal.abs()
    return float(a.max() / a.median())


def hessian_condition(model, loss_fn, batch):
    return robust_condition_number(hessian_diagonal(model, loss_fn(model, batch)))


def directional_smoothness(model, loss_fn, batch, direction):
    """u^T H u with u = direction / ||direction||: the loss's second derivative along u at the current parameters,
    by one Hessian-vector product."""
    u = direction.detach().reshape(-1)
    u = (u / u.norm()).to(next(iter(trainable(model))).dtype)
    grad = flat_grad(model, loss_fn(model, batch), create_graph=True)
    hv = flat_grad(model, (grad * u).sum())
    return float((hv * u).sum())


def flat_parameters(model):
    return torch.cat([p.detach().reshape(-1) for p in trainable(model)])


def tail_statistics(samples):
    """Skewness, excess kurtosis (0 for a Gaussian) and p99/median of a 1-D sample."""
    x = torch.as_tensor(samples, dtype=torch.float64).reshape(-1)
    c = x - x.mean()
    var = (c ** 2).mean()
    return {"skewness": float((c ** 3).mean() / var ** 1.5), "excess_kurtosis": float((c ** 4).mean() / var ** 2 - 3),
            "p99_over_median": float(torch.quantile(x, 0.99) / x.median()), "mean": float(x.mean())}


def gaussian_surrogate_norms(vectors, samples, generator):
    """Norms of `samples` Gaussian vectors with the empirical mean and covariance of `vectors` (rows): the
    reference a heavy-tail statistic of the noise norms is compared with (same covariance, Gaussian law)."""
    v = vectors.double()
    mean, centred = v.mean(0), v - v.mean(0)
    z = torch.randn(samples, v.shape[0], generator=generator, dtype=torch.float64)
    return (mean + z @ centred / math.sqrt(v.shape[0] - 1)).norm(dim=1)
