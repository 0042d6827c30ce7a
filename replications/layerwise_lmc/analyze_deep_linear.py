"""Deep linear network (section 4; claims I1, F9, F10, K1): f(X) = X W1 W2 W3 with the squared loss, in float64.

Along a single-layer cut (one W_k interpolated, the others fixed) the output is affine in alpha, so the squared loss
is a convex quadratic in alpha (Theorem 4.1 of the submission): its second differences on a grid are >= 0 up to
rounding. Checked for every layer, both directions (the others from A, or from B), on two pairs:
  * trained: A and B trained from different random inits on the same linear regression task (full-batch Adam);
  * constructed: B = A with W1 * c and W2 / c, the same function (the toy of the paper's Fig. 4, blog numbering,
    in our construction): the whole path has a barrier, the layer-2 cut a low one, the layer-1 cut a high one.
Barriers are at the midpoint against the two endpoints' mean loss, divided by the mean squared target.
"""
from itertools import pairwise

import numpy as np
import torch

from shared.pipeline.run import start_run, write_metrics
from shared.io.smoke import capped


def loss(ws, x, y):
    out = x
    for w in ws:
        out = out @ w
    return ((out - y) ** 2).mean().item()


def train(x, y, p, gen):
    dims = [p["d_in"], p["width"], p["width"], p["d_out"]]
    ws = [(p["init_std"] * torch.randn(i, o, generator=gen, dtype=torch.float64) / i ** 0.5).requires_grad_()
          for i, o in pairwise(dims)]
    opt = torch.optim.Adam(ws, lr=p["lr"])
    for _ in capped(range(p["steps"]), p["steps"], "deep_linear"):
        out = x
        for w in ws:
            out = out @ w
        value = ((out - y) ** 2).mean()
        opt.zero_grad()
        value.backward()
        opt.step()
    return [w.detach() for w in ws]


def path(a, b, alphas, layers, base):
    """Losses along the path that interpolates `layers` (indices), the others from `base`."""
    def at(t):
        fixed = a if base == "a" else b
        return [(1 - t) * a[k] + t * b[k] if k in layers else fixed[k] for k in range(len(a))]
    return at


def main():
    run = start_run("metrics", "arrays")
    p = run.params
    gen = torch.Generator().manual_seed(p["seed"])
    x = torch.randn(p["n"], p["d_in"], generator=gen, dtype=torch.float64)
    target = torch.randn(p["d_in"], p["d_out"], generator=gen, dtype=torch.float64) / p["d_in"] ** 0.5
    y = x @ target
    power = (y ** 2).mean().item()
    a = train(x, y, p, gen)
    b = train(x, y, p, gen)
    c = p["toy_scale"]
    pairs = {"trained": (a, b), "constructed": (a, [a[0] * c, a[1] / c, a[2]])}
    alphas = np.linspace(0.0, 1.0, p["grid"])
    mid = p["grid"] // 2
    m, arrays, cut_min, full_min = {}, {"alpha": alphas}, np.inf, np.inf
    for name, (pa, pb) in pairs.items():
        ref = (loss(pa, x, y) + loss(pb, x, y)) / 2
        m[f"{name}_endpoint_loss_rel"] = ref / power
        at = path(pa, pb, alphas, {0, 1, 2}, "a")
        full = np.array([loss(at(t), x, y) for t in alphas])
        full_min = min(full_min, np.diff(full, 2).min())
        arrays[f"{name}_full"] = full / power
        m[f"{name}_full_barrier_rel"] = (loss(at(0.5), x, y) - ref) / power
        for k in range(3):
            for base in ("a", "b"):
                at = path(pa, pb, alphas, {k}, base)
                curve = np.array([loss(at(t), x, y) for t in alphas])
                cut_min = min(cut_min, np.diff(curve, 2).min())
                arrays[f"{name}_cut{k + 1}_{base}"] = curve / power
                m[f"{name}_cut{k + 1}_{base}_barrier_rel"] = (loss(at(0.5), x, y) - ref) / power
        assert abs(alphas[mid] - 0.5) < 1e-12
    m["cut_min_second_diff"] = float(cut_min)
    m["full_min_second_diff"] = float(full_min)
    m["toy_full_barrier_rel"] = m["constructed_full_barrier_rel"]
    m["toy_layer1_over_layer2"] = (m["constructed_cut1_a_barrier_rel"] / m["constructed_cut2_a_barrier_rel"]
                                   if m["constructed_cut2_a_barrier_rel"] != 0 else float("nan"))
    info = {"loss": "mean squared error / mean squared target", "grid": p["grid"], "toy_scale": c,
            "trained_final_loss_rel": [loss(a, x, y) / power, loss(b, x, y) / power]}
    write_metrics(run.args.metrics, m, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print({k: round(v, 6) for k, v in m.items()})


if __name__ == "__main__":
    main()
