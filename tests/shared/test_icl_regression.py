"""shared.data.icl_regression: shapes, determinism, covariate and task laws."""
import math

import pytest
import torch

from shared.data.icl_regression import embed, sample_prompts


def test_shapes_and_embedding():
    prompts = sample_prompts(8, 6, 3, torch.Generator().manual_seed(0), sigma=0.1)
    assert prompts.x.shape == (8, 7, 3) and prompts.y.shape == (8, 7) and prompts.w.shape == (8, 3)
    assert prompts.n == 6 and prompts.x.dtype == torch.float32
    z = embed(prompts)
    assert z.shape == (8, 7, 4)
    assert torch.equal(z[:, :-1, -1], prompts.y[:, :-1]) and torch.all(z[:, -1, -1] == 0)
    assert prompts.y[:, -1].abs().sum() > 0  # embed does not modify the targets
    relu = sample_prompts(8, 6, 3, torch.Generator().manual_seed(0), task="relu_net")
    assert relu.w is None and relu.y.shape == (8, 7)


@pytest.mark.parametrize("covariates", ["normal", "sphere", "gamma"])
def test_same_seed_same_prompts(covariates):
    a = sample_prompts(16, 5, 4, torch.Generator().manual_seed(7), covariates=covariates, sigma=0.2)
    b = sample_prompts(16, 5, 4, torch.Generator().manual_seed(7), covariates=covariates, sigma=0.2)
    c = sample_prompts(16, 5, 4, torch.Generator().manual_seed(8), covariates=covariates, sigma=0.2)
    assert torch.equal(a.x, b.x) and torch.equal(a.y, b.y)
    assert not torch.equal(a.x, c.x)


def test_noiseless_linear_targets():
    p = sample_prompts(32, 5, 4, torch.Generator().manual_seed(1), dtype=torch.float64)
    assert torch.allclose(p.y, torch.einsum("bnd,bd->bn", p.x, p.w), atol=1e-12)


def test_noise_level():
    p = sample_prompts(20_000, 4, 3, torch.Generator().manual_seed(2), sigma=0.5, dtype=torch.float64)
    resid = p.y - torch.einsum("bnd,bd->bn", p.x, p.w)
    assert resid.std().item() == pytest.approx(0.5, rel=0.02)


def test_sphere_has_unit_norm():
    p = sample_prompts(64, 5, 6, torch.Generator().manual_seed(3), covariates="sphere", dtype=torch.float64)
    assert torch.allclose(p.x.norm(dim=-1), torch.ones(64, 6, dtype=torch.float64), atol=1e-12)


@pytest.mark.parametrize("shape", [0.5, 2.5])
def test_gamma_radius_second_moment(shape):
    p = sample_prompts(20_000, 9, 5, torch.Generator().manual_seed(4), covariates="gamma", gamma_shape=shape,
                       dtype=torch.float64)
    r2 = (p.x**2).sum(-1).flatten()
    se = r2.std().item() / math.sqrt(r2.numel())
    assert abs(r2.mean().item() - math.sqrt(10 * shape)) < 5 * se


def test_cov_and_w_cov_respected():
    d = 3
    cov = torch.tensor([[2.0, 0.5, 0.0], [0.5, 1.0, 0.3], [0.0, 0.3, 0.5]], dtype=torch.float64)
    w_cov = torch.diag(torch.tensor([4.0, 1.0, 0.25], dtype=torch.float64))
    p = sample_prompts(50_000, 3, d, torch.Generator().manual_seed(5), cov=cov, w_cov=w_cov, dtype=torch.float64)
    x = p.x.reshape(-1, d)
    assert torch.allclose(x.T @ x / len(x), cov, atol=0.03)
    assert torch.allclose(p.w.T @ p.w / len(p.w), w_cov, atol=0.1)


def test_relu_net_targets_are_rotation_invariant_in_scale():
    p = sample_prompts(20_000, 3, 4, torch.Generator().manual_seed(6), task="relu_net", width=16,
                       dtype=torch.float64)
    # E[y^2] = E||x||^2 / d * E[relu(z)^2] * 1 = 1/2 for v ~ N(0, 1), U ~ N(0, 1/d), x ~ N(0, I_d)
    assert (p.y**2).mean().item() == pytest.approx(0.5, rel=0.05)


def test_bad_options_are_refused():
    with pytest.raises(ValueError):
        sample_prompts(2, 3, 2, torch.Generator(), covariates="uniform")
    with pytest.raises(ValueError):
        sample_prompts(2, 3, 2, torch.Generator(), task="tree")
