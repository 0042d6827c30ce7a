"""shared.train.lr_sweep: grid optimum, exact step polynomials, fine minimisation."""
import numpy as np
import pytest

from shared.train.lr_sweep import evaluate_polynomial, minimise_on_grid, optimal_on_grid, step_polynomial


def test_optimal_on_grid_refines_interior_and_keeps_boundary():
    lrs = np.geomspace(1e-4, 1e-1, 7)
    losses = (np.log(lrs) - np.log(3e-3)) ** 2
    best, i = optimal_on_grid(lrs, losses)
    assert best == pytest.approx(3e-3, rel=1e-6) and 0 < i < 6
    assert optimal_on_grid(lrs, -np.log(lrs))[0] == lrs[-1]  # not bracketed: the edge, unrefined
    assert optimal_on_grid([1, 2, 3], [np.nan, 1.0, 2.0]) == (2.0, 1)  # a diverged (NaN) neighbour: no parabola


def test_step_polynomial_is_exact_for_polynomials():
    coeffs = np.array([[1.0, -2.0], [0.5, 3.0], [-0.25, 0.0], [2.0, 1.0]])  # degree 3, two outputs
    def output_at(eta):
        return sum(c * eta ** l for l, c in enumerate(coeffs))
    found = step_polynomial(output_at, 3, scale=2.0)
    np.testing.assert_allclose(found, coeffs, atol=1e-12)
    np.testing.assert_allclose(evaluate_polynomial(found, [0.0, 1.5])[1], output_at(1.5), atol=1e-12)


def test_minimise_on_grid():
    eta, value = minimise_on_grid(lambda e: (e - 0.37) ** 2 + 1, 1e-4, 10)
    assert eta == pytest.approx(0.37, rel=1e-4) and value == pytest.approx(1.0)
