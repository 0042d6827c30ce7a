"""Learning-rate sweeps: the optimum on a grid, refined, and the exact one-step loss as a polynomial in the step.

After one gradient step from fixed weights, a network whose output is multilinear in L trained weight matrices
(a deep linear MLP) outputs a polynomial of degree L in the learning rate eta. `step_polynomial` recovers its
coefficients exactly from L + 1 evaluations (a Vandermonde solve in float64 at Chebyshev nodes), so the loss can
be minimised over eta on a fine grid without training again.
"""
import math

import numpy as np


def optimal_on_grid(lrs, losses):
    """(best lr, index) of a sweep, refined by a parabola through the best point and its neighbours in log lr when
    it is interior (a boundary optimum is returned as is: the grid did not bracket it). NaN losses count as inf."""
    lrs, losses = np.asarray(lrs, float), np.where(np.isfinite(losses), np.asarray(losses, float), np.inf)
    i = int(np.argmin(losses))
    if 0 < i < len(lrs) - 1 and np.isfinite(losses[i - 1 : i + 2]).all():
        x, y = np.log(lrs[i - 1 : i + 2]), losses[i - 1 : i + 2]
        a, b, _ = np.polyfit(x, y, 2)
        if a > 0:
            return float(np.exp(np.clip(-b / (2 * a), x[0], x[2]))), i
    return float(lrs[i]), i


def chebyshev_nodes(degree, low, high):
    k = np.arange(degree + 1)
    return (low + high) / 2 + (high - low) / 2 * np.cos((2 * k + 1) * math.pi / (2 * degree + 2))


def step_polynomial(output_at, degree, scale=1.0):
    """Coefficients c[0..degree] (float64, shape (degree + 1, *output)) with output_at(eta) = sum_l c[l] eta^l,
    from degree + 1 calls at Chebyshev nodes on [0, scale]. Exact up to rounding when the output is a polynomial
    of at most that degree in eta."""
    etas = chebyshev_nodes(degree, 0.0, scale)
    values = np.stack([np.asarray(output_at(float(e)), dtype=np.float64) for e in etas])
    vander = np.vander(etas / scale, degree + 1, increasing=True)
    coeffs = np.linalg.solve(vander, values.reshape(degree + 1, -1)).reshape(values.shape)
    return coeffs / (scale ** np.arange(degree + 1)).reshape(-1, *[1] * (values.ndim - 1))


def evaluate_polynomial(coeffs, etas):
    """(len(etas), *output) values of the polynomial with coefficients c[l] at each eta."""
    etas = np.asarray(etas, dtype=np.float64)
    powers = etas[:, None] ** np.arange(len(coeffs))[None, :]
    return np.tensordot(powers, coeffs, axes=(1, 0))


def minimise_on_grid(loss_at, low, high, points=4000, refine=2000):
    """argmin of a vectorised loss_at(etas) over log-spaced points in [low, high], then linear points between the
    best point's neighbours. Returns (eta*, loss(eta*))."""
    grid = np.geomspace(low, high, points)
    losses = loss_at(grid)
    i = int(np.argmin(losses))
    fine = np.linspace(grid[max(i - 1, 0)], grid[min(i + 1, points - 1)], refine)
    fine_losses = loss_at(fine)
    j = int(np.argmin(fine_losses))
    return float(fine[j]), float(fine_losses[j])
