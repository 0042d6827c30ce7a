"""shared.nn.icl_baselines: the closed forms against Monte Carlo and against each other."""
import pytest
import torch

from shared.data.icl_regression import sample_prompts
from shared.nn import icl_baselines as bl


def random_cov(d, seed):
    gen = torch.Generator().manual_seed(seed)
    a = torch.randn(d, d, generator=gen, dtype=torch.float64)
    return a @ a.T / d + 0.3 * torch.eye(d, dtype=torch.float64)


def test_eta_star_values():
    assert bl.eta_star(20, 5, 0.5) == pytest.approx(20 / 26.25)
    assert bl.eta_star(10, 2, 0.0) == pytest.approx(10 / 13)


@pytest.mark.parametrize("sigma", [0.0, 0.5])
def test_gamma_star_isotropic_and_inverse_pairing(sigma):
    d, n = 4, 15
    eye = torch.eye(d, dtype=torch.float64)
    assert torch.allclose(bl.gamma_star(eye, eye, n, sigma), bl.eta_star(n, d, sigma) * eye, atol=1e-14)
    cov = random_cov(d, 0)
    star = bl.gamma_star(cov, torch.linalg.inv(cov), n, sigma)
    assert torch.allclose(star, bl.eta_star(n, d, sigma) * torch.linalg.inv(cov), atol=1e-12)


def test_gamma_star_zhang_frei_bartlett_form():
    d, n, sigma = 3, 9, 0.0
    cov = random_cov(d, 1)
    eye = torch.eye(d, dtype=torch.float64)
    zfb = n * torch.linalg.inv(torch.trace(cov) * eye + (n + 1) * cov)
    assert torch.allclose(bl.gamma_star(cov, eye, n, sigma), zfb, atol=1e-12)


def test_gamma_star_minimises_analytic_risk():
    d, n, sigma = 3, 8, 0.3
    cov, w_cov = random_cov(d, 2), random_cov(d, 3)
    star = bl.gamma_star(cov, w_cov, n, sigma)
    best = bl.analytic_risk(star, cov, w_cov, n, sigma)
    gen = torch.Generator().manual_seed(0)
    for _ in range(5):
        assert bl.analytic_risk(star + 0.05 * torch.randn(d, d, generator=gen, dtype=torch.float64),
                                cov, w_cov, n, sigma) > best
    eye = torch.eye(d, dtype=torch.float64)
    eta = bl.eta_star(n, d, sigma)
    assert bl.analytic_risk(eta * eye, eye, eye, n, sigma) == pytest.approx(d * (1 - eta) + sigma**2, rel=1e-12)


def test_analytic_risk_matches_monte_carlo():
    d, n, sigma = 3, 6, 0.5
    cov = random_cov(d, 4)
    w_cov = torch.linalg.inv(cov)
    gamma = 0.5 * torch.eye(d, dtype=torch.float64) + 0.1
    prompts = sample_prompts(100_000, n, d, torch.Generator().manual_seed(1), cov=cov, w_cov=w_cov, sigma=sigma,
                             dtype=torch.float64)
    mc, se = bl.risk(bl.one_step_gd(prompts, gamma), prompts)
    assert abs(mc - bl.analytic_risk(gamma, cov, w_cov, n, sigma)) < 4 * se


def test_one_step_gd_scalar_matrix_and_k_step():
    prompts = sample_prompts(64, 10, 4, torch.Generator().manual_seed(2), sigma=0.1, dtype=torch.float64)
    eye = torch.eye(4, dtype=torch.float64)
    assert torch.allclose(bl.one_step_gd(prompts, 0.7), bl.one_step_gd(prompts, 0.7 * eye), atol=1e-14)
    assert torch.allclose(bl.k_step_gd(prompts, 0.7, 1), bl.one_step_gd(prompts, 0.7), atol=1e-14)


def test_k_step_gd_converges_to_least_squares():
    prompts = sample_prompts(32, 40, 3, torch.Generator().manual_seed(3), sigma=0.2, dtype=torch.float64)
    assert torch.allclose(bl.k_step_gd(prompts, 0.3, 400), bl.ols(prompts), atol=1e-8)


def test_ridge_limits_and_bayes_advantage():
    prompts = sample_prompts(20_000, 10, 5, torch.Generator().manual_seed(4), sigma=0.5, dtype=torch.float64)
    assert torch.allclose(bl.ridge(prompts, 1e-12), bl.ols(prompts), atol=1e-6)
    assert bl.ridge(prompts, 1e9).abs().max() < 1e-6
    ridge_risk = bl.risk(bl.ridge(prompts, 0.25), prompts)[0]
    assert ridge_risk < bl.risk(bl.one_step_gd(prompts, bl.eta_star(10, 5, 0.5)), prompts)[0]
    assert ridge_risk < bl.risk(bl.ridge(prompts, 2.0), prompts)[0]


def test_best_scalar_recovers_eta_star_for_linear_tasks():
    d, n, sigma = 5, 20, 0.5
    prompts = sample_prompts(200_000, n, d, torch.Generator().manual_seed(5), sigma=sigma, dtype=torch.float64)
    assert bl.best_scalar(prompts) == pytest.approx(bl.eta_star(n, d, sigma), rel=0.02)
