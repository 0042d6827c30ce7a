"""Closed-form in-context regression baselines (Mahankali et al.; Ahn et al.; Zhang, Frei and Bartlett).

For prompts x_i ~ N(0, cov), w ~ N(0, w_cov), y = w^T x + sigma * noise (shared.data.icl_regression), with
g = (1/n) sum_i y_i x_i, a preconditioner Gamma predicts y_q by one step of preconditioned GD from w = 0 on
(1/2n) sum_i (w^T x_i - y_i)^2: y_hat = x_q^T Gamma g.

    E[g g^T] = M = (1/n) [(tr(cov w_cov) + sigma^2) cov + (n + 1) cov w_cov cov]
    R(Gamma) = tr(cov Gamma M Gamma^T) - 2 tr(cov Gamma cov w_cov) + tr(cov w_cov) + sigma^2
    Gamma*   = w_cov cov M^-1 = n w_cov cov [(tr(cov w_cov) + sigma^2) cov + (n + 1) cov w_cov cov]^-1

so Gamma* = eta* I with eta* = n / (n + d + 1 + sigma^2) for cov = w_cov = I, and eta* cov^-1 for w_cov = cov^-1.
Everything here is float64.
"""
import torch


def _f64(a):
    return torch.as_tensor(a, dtype=torch.float64)


def eta_star(n, d, sigma):
    """The optimal step of plain one-step GD for x ~ N(0, I_d), w ~ N(0, I_d), noise sigma."""
    return n / (n + d + 1 + sigma**2)


def second_moment(cov, w_cov, n, sigma):
    """M = E[g g^T]."""
    cov, w_cov = _f64(cov), _f64(w_cov)
    return ((torch.trace(cov @ w_cov) + sigma**2) * cov + (n + 1) * cov @ w_cov @ cov) / n


def gamma_star(cov, w_cov, n, sigma):
    """The risk-minimising preconditioner w_cov cov M^-1 (float64, d x d)."""
    cov, w_cov = _f64(cov), _f64(w_cov)
    return torch.linalg.solve(second_moment(cov, w_cov, n, sigma).T, (w_cov @ cov).T).T


def analytic_risk(gamma, cov, w_cov, n, sigma):
    """E[(x_q^T Gamma g - y_q)^2] for Gaussian prompts (the target y_q carries its noise)."""
    gamma, cov, w_cov = _f64(gamma), _f64(cov), _f64(w_cov)
    m = second_moment(cov, w_cov, n, sigma)
    return float(torch.trace(cov @ gamma @ m @ gamma.T) - 2 * torch.trace(cov @ gamma @ cov @ w_cov)
                 + torch.trace(cov @ w_cov) + sigma**2)


def _context(prompts):
    x = prompts.x.to(torch.float64)
    y = prompts.y.to(torch.float64)
    return x[:, :-1], y[:, :-1], x[:, -1]


def _gamma_matrix(gamma, d):
    gamma = _f64(gamma)
    return gamma * torch.eye(d, dtype=torch.float64) if gamma.ndim == 0 else gamma


def one_step_gd(prompts, gamma):
    """Predictions x_q^T Gamma g (Gamma a scalar or a d x d matrix)."""
    xs, ys, xq = _context(prompts)
    g = torch.einsum("bn,bnd->bd", ys, xs) / xs.shape[1]
    return torch.einsum("bd,de,be->b", xq, _gamma_matrix(gamma, xs.shape[-1]), g)


def k_step_gd(prompts, gamma, k):
    """Predictions after k steps w <- w - Gamma (1/n) sum_i (w^T x_i - y_i) x_i from w = 0 (k = 1: one_step_gd)."""
    xs, ys, xq = _context(prompts)
    n, d = xs.shape[1], xs.shape[2]
    gam = _gamma_matrix(gamma, d)
    w = torch.zeros(xs.shape[0], d, dtype=torch.float64)
    for _ in range(k):
        residual = torch.einsum("bnd,bd->bn", xs, w) - ys
        w = w - torch.einsum("de,be->bd", gam, torch.einsum("bn,bnd->bd", residual, xs) / n)
    return torch.einsum("bd,bd->b", xq, w)


def ridge(prompts, lam):
    """Predictions of ridge regression w = (X^T X + lam I)^-1 X^T y (unnormalised: lam = sigma^2 is the Bayes
    posterior mean for w ~ N(0, I)); lam = 0 is least squares (minimum-norm when n < d)."""
    xs, ys, xq = _context(prompts)
    if lam == 0:
        w = torch.linalg.lstsq(xs, ys.unsqueeze(-1), driver="gelsd").solution.squeeze(-1) if xs.device.type == "cpu" \
            else (torch.linalg.pinv(xs) @ ys.unsqueeze(-1)).squeeze(-1)
    else:
        gram = xs.transpose(1, 2) @ xs + lam * torch.eye(xs.shape[-1], dtype=torch.float64)
        w = torch.linalg.solve(gram, torch.einsum("bnd,bn->bd", xs, ys))
    return torch.einsum("bd,bd->b", xq, w)


def ols(prompts):
    return ridge(prompts, 0.0)


def risk(pred, prompts):
    """Mean squared error against the query targets, and its standard error."""
    err = (pred.to(torch.float64) - prompts.y[:, -1].to(torch.float64)) ** 2
    return float(err.mean()), float(err.std() / err.numel() ** 0.5)


def best_scalar(prompts):
    """Monte Carlo E[y_q x_q^T g] / E[(x_q^T g)^2]: the best one-step-GD step for any response law (T3)."""
    xs, ys, xq = _context(prompts)
    pred = torch.einsum("bd,bd->b", xq, torch.einsum("bn,bnd->bd", ys, xs) / xs.shape[1])
    yq = prompts.y[:, -1].to(torch.float64)
    return float((yq * pred).mean() / (pred * pred).mean())
