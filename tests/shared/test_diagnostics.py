"""shared/train/diagnostics.py against references known exactly (float64):

- a quadratic loss 0.5 theta^T A theta + b^T theta: the Hessian diagonal is diag(A) (to 1e-12), R_med is
  max|A_ii| / median|A_ii|, the directional smoothness along u is u^T A u / ||u||^2 (to 1e-12);
- a model whose gradient noise is Gaussian by construction (a linear least-squares model with Gaussian inputs at
  theta = 0 and targets ... see test), whose noise norms' tail statistics must be close to the Gaussian surrogate's;
- the Hessian diagonal of a small nonlinear model vs central finite differences (rel. 1e-6).
"""
import torch
from torch import nn

from shared.train import diagnostics as diag


class Quadratic(nn.Module):
    def __init__(self, a, b):
        super().__init__()
        self.theta = nn.Parameter(torch.randn(a.shape[0], dtype=torch.float64))
        self.a, self.b = a, b

    def forward(self):
        return 0.5 * self.theta @ self.a @ self.theta + self.b @ self.theta


def quadratic(p=12, seed=0):
    g = torch.Generator().manual_seed(seed)
    m = torch.randn(p, p, generator=g, dtype=torch.float64)
    a = m @ m.T + torch.diag(torch.linspace(0.1, 30, p, dtype=torch.float64))
    torch.manual_seed(seed)
    return Quadratic(a, torch.randn(p, generator=g, dtype=torch.float64)), a


def test_hessian_diagonal_of_quadratic():
    model, a = quadratic()
    d = diag.hessian_diagonal(model, model())
    assert torch.allclose(d, a.diagonal(), rtol=0, atol=1e-12)
    expected = float(a.diagonal().abs().max() / a.diagonal().abs().median())
    assert abs(diag.robust_condition_number(d) - expected) <= 1e-12 * expected


def test_directional_smoothness_of_quadratic():
    model, a = quadratic()
    u = torch.randn(a.shape[0], dtype=torch.float64) * 3.0  # not unit: the function normalises
    got = diag.directional_smoothness(model, lambda m, _: m(), None, u)
    v = u / u.norm()
    assert abs(got - float(v @ a @ v)) <= 1e-12 * float(a.diagonal().abs().max())


def test_hessian_diagonal_matches_finite_differences():
    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)).double()
    x = torch.randn(32, 3, dtype=torch.float64)
    y = torch.randn(32, 1, dtype=torch.float64)
    loss_fn = lambda m, batch: ((m(batch[0]) - batch[1]) ** 2).mean()  # noqa: E731
    d = diag.hessian_diagonal(model, loss_fn(model, (x, y)))
    fd, i, h = [], 0, 1e-5
    for prm in diag.trainable(model):
        for k in range(prm.numel()):
            grads = []
            for sign in (1, -1):
                with torch.no_grad():
                    prm.view(-1)[k] += sign * h
                grads.append(diag.gradient(model, loss_fn, (x, y))[i])
                with torch.no_grad():
                    prm.view(-1)[k] -= sign * h
            fd.append((grads[0] - grads[1]) / (2 * h))
            i += 1
    fd = torch.stack(fd)
    assert float((d - fd).abs().max() / d.abs().max()) <= 1e-6


def test_gaussian_noise_is_not_heavy_tailed():
    """Loss theta^T xi per example with xi ~ N(mu, I): each mini-batch gradient is mean(xi), exactly Gaussian, so the
    noise vectors are Gaussian and their norms are chi-like: the heavy-tail statistics match the surrogate's."""
    p = 20
    model = nn.Linear(p, 1, bias=False).double()
    mu = torch.full((p,), 0.5, dtype=torch.float64)

    def sample(size, generator):
        return mu + torch.randn(size, p, generator=generator, dtype=torch.float64)

    loss_fn = lambda m, xi: m(xi).mean()  # noqa: E731
    gen = torch.Generator().manual_seed(0)
    norms, vectors = diag.gradient_noise_samples(model, loss_fn, sample, batch=50, full_batch=20000, samples=2000,
                                                 generator=gen, return_vectors=True)
    # the noise g_B - g_full has covariance I/50 (plus the small offset of g_full): mean norm ~ sqrt(p / 50)
    assert abs(float(norms.mean()) - (p / 50) ** 0.5) < 0.05
    stats = diag.tail_statistics(norms)
    ref = diag.tail_statistics(diag.gaussian_surrogate_norms(vectors, 20000, torch.Generator().manual_seed(1)))
    assert abs(stats["excess_kurtosis"]) < 0.5 and abs(stats["excess_kurtosis"] - ref["excess_kurtosis"]) < 0.4
    assert abs(stats["skewness"] - ref["skewness"]) < 0.25
    assert stats["p99_over_median"] < 1.6


def test_tail_statistics_of_known_laws():
    g = torch.Generator().manual_seed(0)
    gauss = diag.tail_statistics(torch.randn(200000, generator=g, dtype=torch.float64))
    assert abs(gauss["skewness"]) < 0.02 and abs(gauss["excess_kurtosis"]) < 0.05
    expo = diag.tail_statistics(torch.empty(200000, dtype=torch.float64).exponential_(generator=g))
    assert abs(expo["skewness"] - 2) < 0.1 and abs(expo["excess_kurtosis"] - 6) < 0.6
