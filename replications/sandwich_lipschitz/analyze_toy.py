"""The toy square wave (claims T1-T4, identities I1-I3, controls K1-K2), float64 on the trained weights.

  * Fit: test MSE on the 200-point grid of each network; the best any gamma-Lipschitz function can do on that grid
    (a bounded least-squares problem: f = f0 + cumsum(d), |d_i| <= gamma * spacing) as the reference.
  * Empirical Lipschitz constant, a lower bound of the true one: the larger of max |f'(x)| on a dense grid over
    [-3, 3] (the input is 1-D, so the Jacobian norm is |f'|) and the official-style pair search (gradient ascent on
    |f(a) - f(b)| / |a - b| from `restarts` random pairs). Its ratio to gamma is the tightness of the bound.
  * The Cayley matrices of the trained sandwich layers: the largest deviation of [A B][A B]^T from I.
"""
import statistics

import numpy as np
import torch
from scipy.optimize import lsq_linear

from shared.pipeline.run import load_models, start_run, write_metrics
from shared.nn.sandwich import SandwichLinear, SandwichReadout, cayley, empirical_lipschitz

from .common import toy_data


def best_lipschitz_mse(x, y, gamma):
    """The smallest MSE of any gamma-Lipschitz function on sorted 1-D points x (exact: bounded least squares)."""
    x, y = x.numpy().ravel(), y.numpy().ravel()
    n, gaps = len(x), np.diff(x)
    lower = np.tril(np.ones((n, n - 1)), -1)  # f_i = f0 + sum_{j < i} d_j
    design = np.hstack([np.ones((n, 1)), lower])
    bound = np.concatenate([[np.inf], gamma * gaps])
    fit = lsq_linear(design, y, bounds=(-bound, bound), tol=1e-12)
    return float(np.mean((design @ fit.x - y) ** 2))


def lipschitz_lower_bound(model, grid, restarts, steps, generator):
    x = grid.clone().requires_grad_(True)
    (slope,) = torch.autograd.grad(model(x).sum(), x)
    starts = -3 + 6 * torch.rand(restarts, 1, generator=generator, dtype=torch.float64)
    return max(slope.abs().max().item(), empirical_lipschitz(model, starts, steps=steps, generator=generator))


def orthonormality_error(model):
    worst = 0.0
    for layer in model.modules():
        if isinstance(layer, (SandwichLinear, SandwichReadout)):
            Q = cayley(layer.alpha * layer.weight / layer.weight.norm())
            worst = max(worst, (Q @ Q.T - torch.eye(len(Q), dtype=Q.dtype)).abs().max().item())
    return worst


def main():
    run = start_run("checkpoint", "untrained", "metrics", "arrays")
    p = run.params
    t, a = p["toy"], p["analysis"]
    models, specs, meta = load_models(run.args.checkpoint)
    untrained, _, _ = load_models(run.args.untrained)
    gen = run.generator(0, "lipschitz-search")
    grid = torch.linspace(-3, 3, a["grid_points"], dtype=torch.float64)[:, None]
    _, _, x_test, y_test = toy_data(t["train_points"], t["test_points"], run.generator(0, "data"))
    x_test, y_test = x_test.double(), y_test.double()

    mse, ratio, orth_err = {}, {}, []
    for name, model in models.items():
        s, model = specs[name], model.double()
        with torch.no_grad():
            mse[name] = float(((model(x_test) - y_test) ** 2).mean())
        lip = lipschitz_lower_bound(model, grid, a["restarts"], a["search_steps"], gen)
        ratio[name] = lip / s["gamma"] if s["gamma"] else lip
        if s["kind"] == "sandwich":
            orth_err.append(orthonormality_error(model))

    def mean(kind, gamma, table):
        return statistics.fmean(v for n, v in table.items() if specs[n]["kind"] == kind and specs[n]["gamma"] == gamma)

    m = {}
    for g in t["gammas"]:
        for kind in ("sandwich", "orthogonal"):
            m[f"{kind}_mse_g{g:g}"] = mean(kind, g, mse)
            m[f"{kind}_lip_ratio_g{g:g}"] = mean(kind, g, ratio)
        m[f"best_lipschitz_mse_g{g:g}"] = best_lipschitz_mse(x_test, y_test, g)
        m[f"sandwich_over_best_mse_g{g:g}"] = m[f"sandwich_mse_g{g:g}"] / m[f"best_lipschitz_mse_g{g:g}"]
    first = min(t["gammas"])
    m["sandwich_lip_ratio_first_gamma_min"] = min(v for n, v in ratio.items() if specs[n]["kind"] == "sandwich"
                                                  and specs[n]["gamma"] == first)
    m["lip_ratio_sandwich_minus_orthogonal_min"] = min(m[f"sandwich_lip_ratio_g{g:g}"]
                                                       - m[f"orthogonal_lip_ratio_g{g:g}"] for g in t["gammas"])
    m["mse_orthogonal_over_sandwich_min"] = min(m[f"orthogonal_mse_g{g:g}"] / m[f"sandwich_mse_g{g:g}"]
                                                for g in t["gammas"])
    m["sandwich_over_best_mse_first_gamma"] = m[f"sandwich_over_best_mse_g{first:g}"]
    m["plain_mse"] = mean("plain", None, mse)
    m["plain_lipschitz_min"] = min(v for n, v in ratio.items() if specs[n]["kind"] == "plain")
    bounded = [n for n in models if specs[n]["kind"] != "plain"]
    m["lip_ratio_max"] = max(ratio[n] for n in bounded)  # trained sandwich and orthogonal: never above 1
    m["mse_minus_best_min"] = min(mse[n] - m[f"best_lipschitz_mse_g{specs[n]['gamma']:g}"] for n in bounded)
    m["cayley_orthonormality_err_max"] = max(orth_err)
    m["untrained_sandwich_lip_ratio_max"] = max(
        lipschitz_lower_bound(model.double(), grid, a["restarts"], a["search_steps"], gen) / s_gamma
        for model, s_gamma in ((mdl, specs[n]["gamma"]) for n, mdl in untrained.items()))

    with torch.no_grad():
        curves = {n: models[n](x_test)[:, 0].numpy() for n in models if specs[n]["seed"] == t["seeds"][0]}
    arrays = {"x": x_test[:, 0].numpy(), "y": y_test[:, 0].numpy(), "names": np.array(sorted(curves)),
              "curves": np.stack([curves[n] for n in sorted(curves)])}
    info = {"test_points": len(x_test), "grid_points": a["grid_points"], "restarts": a["restarts"], "dtype": "float64"}
    write_metrics(run.args.metrics, m, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(m)


if __name__ == "__main__":
    main()
