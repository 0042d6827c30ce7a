"""Expressivity (claims X1-X5, identity I3, control K1).

  * XOR and disk: accuracy of each trained single neuron, quadratic against conventional (XOR on its four points,
    the disk on fresh test points).
  * x1 x2 and ||x||^2: relative test MSE (MSE / Var y, fresh points) of the quadratic net against the conventional
    ReLU net with at least as many parameters (median over seeds, and their ratio).
  * Degree: along random lines a trained single quadratic neuron is a quadratic polynomial (third finite difference
    zero, float64).
  * Functional dimension (the measure of Theorem 2 as the dossier reads it): the generic rank of the Jacobian of
    the network's outputs on many points with respect to its parameters, at random parameters, float64; for a
    polynomial network this is the dimension of its functional variety (Kileel, Trager and Bruna 2019). Quadratic
    neurons without activation against conventional neurons with the activation t^2, same widths, with biases.
    The control K1 checks the rank method on the known case: a shallow homogeneous net x -> sum_i a_i (w_i . x)^2
    spans the symmetric matrices of rank <= d1, of dimension d0 d1 - d1 (d1 - 1) / 2.
"""
import statistics
from itertools import pairwise

import numpy as np
import torch
from torch.func import jacrev

from shared.pipeline.run import load_models, start_run, write_metrics

from .common import CLASSIFY, REGRESS, toy_data


def accuracy(model, x, y):
    with torch.no_grad():
        return float(((model(x)[:, 0] > 0).double() == y).double().mean())


def rel_mse(model, x, y):
    with torch.no_grad():
        return float(((model(x)[:, 0] - y) ** 2).mean() / y.var())


def third_difference(model, generator, lines=16):
    """max over random lines x0 + t v (t = 0..3) of |third difference| / |second difference| of the output."""
    worst = 0.0
    with torch.no_grad():
        for _ in range(lines):
            x0, v = (torch.randn(2, dtype=torch.float64, generator=generator) for _ in range(2))
            f = [model(x0 + t * v)[0] for t in range(4)]
            worst = max(worst, float(abs(f[3] - 3 * f[2] + 3 * f[1] - f[0]) / abs(f[2] - 2 * f[1] + f[0])))
    return worst


def poly_forward(params, x, widths, kind, bias):
    """A polynomial network: quadratic neurons (no activation) or conventional neurons with t^2 (the last layer
    linear); params {'<layer>.<map>.w' / '.b': tensor}."""
    def lin(inputs, i, m):
        out = inputs @ params[f"{i}.{m}.w"].T
        return out + params[f"{i}.{m}.b"] if bias else out

    h = x
    for i in range(len(widths) - 1):
        if kind == "quadratic":
            h = lin(h, i, "r") * lin(h, i, "g") + lin(h * h, i, "b")
        else:
            h = lin(h, i, "r")
            h = h * h if i < len(widths) - 2 else h
    return h


def functional_dimension(widths, kind, bias, generator, tol):
    maps = "rgb" if kind == "quadratic" else "r"
    params = {}
    for i, (a, b) in enumerate(pairwise(widths)):
        for m in maps:
            params[f"{i}.{m}.w"] = torch.randn(b, a, dtype=torch.float64, generator=generator)
            if bias:
                params[f"{i}.{m}.b"] = torch.randn(b, dtype=torch.float64, generator=generator)
    n_params = sum(p.numel() for p in params.values())
    x = torch.rand(3 * n_params + 20, widths[0], dtype=torch.float64, generator=generator) * 2 - 1
    jac = jacrev(lambda p: poly_forward(p, x, widths, kind, bias).reshape(-1))(params)
    J = torch.cat([j.reshape(j.shape[0], -1) for j in jac.values()], 1)
    s = torch.linalg.svdvals(J)
    return int((s > tol * s[0]).sum()), n_params


def main():
    run = start_run("checkpoint", "metrics", "arrays")
    p = run.params
    t, dim = p["toy"], p["dimension"]
    models, specs, meta = load_models(run.args.checkpoint)
    by = {}
    for name, model in models.items():
        s = specs[name]
        model = model.double()
        x, y = toy_data(s["task"], t["test_points"], t["radial_dim"], run.generator(s["seed"], "test"))
        value = accuracy(model, x, y) if s["task"] in CLASSIFY else rel_mse(model, x, y)
        by.setdefault((s["task"], s["neuron"]), []).append(value)
    m = {}
    for task in CLASSIFY:
        m[f"{task}_quadratic_acc_min"] = min(by[(task, "quadratic")])
        m[f"{task}_conventional_acc_max"] = max(by[(task, "conventional")])
    for task in REGRESS:
        quad, conv = (statistics.median(by[(task, n)]) for n in ("quadratic", "conventional"))
        m[f"{task}_quadratic_rel_mse"], m[f"{task}_conventional_rel_mse"] = quad, conv
        m[f"{task}_conventional_over_quadratic"] = conv / max(quad, 1e-300)
        for n in ("quadratic", "conventional"):
            m[f"{task}_{n}_params"] = next(s["params"] for s in specs.values()
                                            if s["task"] == task and s["neuron"] == n)
    gen = run.generator(0, "lines")
    m["degree_third_over_second_max"] = max(third_difference(models[n].double(), gen) for n, s in specs.items()
                                            if s["task"] in CLASSIFY and s["neuron"] == "quadratic")

    gen = run.generator(dim["seed"], "dimension")
    rows, gaps = [], []
    for widths in dim["architectures"]:
        dq, pq = functional_dimension(widths, "quadratic", True, gen, dim["rank_tol"])
        dc, pc = functional_dimension(widths, "conventional", True, gen, dim["rank_tol"])
        rows.append([*widths[:3], *([0] * (3 - len(widths[:3]))), len(widths), dq, pq, dc, pc])
        gaps.append(dq - dc)
        m[f"dim_quadratic_{'_'.join(map(str, widths))}"], m[f"dim_conventional_{'_'.join(map(str, widths))}"] = dq, dc
    m["dimension_gap_min"] = min(gaps)
    errors = []
    for d0, d1 in dim["control_architectures"]:
        found, _ = functional_dimension([d0, d1, 1], "conventional", False, gen, dim["rank_tol"])
        errors.append(abs(found - (d0 * d1 - d1 * (d1 - 1) // 2)))
    m["ktb_shallow_formula_max_abs_err"] = max(errors)

    arrays = {"tasks": np.array(REGRESS),
              "quadratic": np.array([by[(task, "quadratic")] for task in REGRESS]),
              "conventional": np.array([by[(task, "conventional")] for task in REGRESS]),
              "dimension_rows": np.array(rows, dtype=float)}
    info = {"test_points": t["test_points"], "rank_tol": dim["rank_tol"], "dimension_dtype": "float64"}
    write_metrics(run.args.metrics, m, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(m)


if __name__ == "__main__":
    main()
