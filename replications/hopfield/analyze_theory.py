"""The theory on synthetic patterns (identities I1-I4, capacity claim C1, control K2), float64.

  * The update is attention: hopfield_update against torch's fused scaled_dot_product_attention, the Hopfield layer
    without projections against the update, and the layer with its projections against softmax(beta Q K^T) V W_O
    written out from its weights.
  * Energy: from random starts, every update lowers E or leaves it (CCCP), and iterating reaches a fixed point.
  * Capacity: random +-1 patterns of dimension d, a fixed beta; a probe is a stored pattern with a fraction of its
    signs flipped, retrieved when the sign of the one-step state is the pattern. N_max(d) is the largest N of a
    geometric grid (ratio sqrt 2) before the first N whose retrieval rate falls below `success`; the classical
    Hebbian network (W = sum x x^T, zero diagonal, one synchronous sign update) is measured on the same probes.
"""
import math
import statistics

import numpy as np
import torch

from shared.nn.hopfield import (Hopfield, hopfield_energy, hopfield_update, iterate_to_fixed_point,
                                softmax_attention)
from shared.pipeline.run import derive_seed, start_run, write_metrics
from shared.io.runtime import generator


def identities(e, gen):
    X = torch.randn(e["n"], e["d"], dtype=torch.float64, generator=gen)
    xi = torch.randn(e["starts"], e["d"], dtype=torch.float64, generator=gen)
    beta = 1 / math.sqrt(e["d"])
    out = {}
    out["update_vs_sdpa_max_abs"] = float((hopfield_update(X, xi, beta) - softmax_attention(xi, X, X, beta)).abs().max())
    worst = 0.0
    for steps in (0, 1, 3):
        bare = Hopfield(e["d"], scaling=beta, update_steps_max=steps, projections=False, normalize_stored_pattern=False,
                        normalize_state_pattern=False, normalize_pattern_projection=False).double()
        with torch.no_grad():
            worst = max(worst, float((bare(X[None], xi[None])[0] - hopfield_update(X, xi, beta, steps + 1)).abs().max()))
    out["layer_vs_update_max_abs"] = worst
    torch.manual_seed(derive_seed(0, "projections"))
    layer = Hopfield(e["d"], hidden_size=e["d"] // 4, num_heads=4).double().eval()
    R, Y = xi[None], X[None]
    with torch.no_grad():
        nr, ny = layer.norm_state(R), layer.norm_stored(Y)
        heads = []
        for h in range(4):
            cols = slice(h * e["d"] // 4, (h + 1) * e["d"] // 4)
            q = (nr @ layer.q.weight.T + layer.q.bias)[..., cols]
            k = (ny @ layer.k.weight.T + layer.k.bias)[..., cols]
            v = (layer.norm_values(Y) @ layer.v.weight.T + layer.v.bias)[..., cols]
            heads.append(torch.softmax(layer.beta * q @ k.transpose(-1, -2), -1) @ v)
        written = torch.cat(heads, -1) @ layer.out.weight.T + layer.out.bias
        out["projected_layer_vs_attention_max_abs"] = float((layer(Y, R) - written).abs().max())
    rises, final_moves, updates = [], [], []
    for beta in e["betas"]:
        state = xi.clone()
        energy = hopfield_energy(X, state, beta)
        for _ in range(e["iterations"]):
            state = hopfield_update(X, state, beta)
            new = hopfield_energy(X, state, beta)
            rises.append(float((new - energy).max()))
            energy = new
        fixed, taken = iterate_to_fixed_point(X, xi, beta, tol=e["tol"])
        final_moves.append(float((hopfield_update(X, fixed, beta) - fixed).norm(dim=-1).max()))
        updates.append(taken)
    out["energy_max_increase"] = max(rises)
    out["fixed_point_residual_max"] = max(final_moves)
    return out, {"updates_to_fixed_point": dict(zip(map(str, e["betas"]), updates))}


def signs(shape, gen):
    return torch.randint(0, 2, shape, generator=gen).double() * 2 - 1


def retrieval_rate(X, c, gen, rule):
    n, d = X.shape
    probes = X[:min(n, c["probes"])]
    flips = round(c["flip_fraction"] * d)
    q = probes.clone()
    cols = torch.rand(len(q), d, generator=gen).argsort(-1)[:, :flips]
    q.scatter_(1, cols, -q.gather(1, cols))
    if rule == "modern":
        new = torch.cat([hopfield_update(X, part, c["beta"]) for part in q.split(64)])  # (64, N) at a time
    else:
        W = X.T @ X
        W.fill_diagonal_(0)
        field = q @ W
        new = torch.where(field == 0, q, field)
    return float((torch.sign(new) == probes).all(-1).double().mean())


def n_max(d, c, seed, rule):
    gen = generator(derive_seed(seed, f"capacity_{rule}_{d}"))
    best, k = 1, 2
    while True:
        n = round(2 ** (k / 2))
        if n > c["max_n"]:
            return best, True  # capped: the rate never fell below `success` up to max_n
        X = signs((n, d), gen)
        if retrieval_rate(X, c, gen, rule) < c["success"]:
            return best, False
        best, k = n, k + 1


def r_squared(x, y):
    """R^2 of the least-squares line y ~ x."""
    slope, intercept = np.polyfit(x, y, 1)
    return 1 - ((y - (slope * x + intercept)) ** 2).sum() / ((y - y.mean()) ** 2).sum()


def capacity(c):
    dims = c["dims"]
    table, capped = {}, False
    for rule in ("modern", "hebbian"):
        rows = []
        for d in dims:
            found = [n_max(d, c, seed, rule) for seed in c["seeds"]]
            capped |= any(hit for _, hit in found)
            rows.append([n for n, _ in found])
        table[rule] = np.array(rows, dtype=float)  # (dims, seeds)
    logs = np.log(table["modern"]).mean(1)
    slope, intercept = np.polyfit(dims, logs, 1)
    r2 = r_squared(np.array(dims, float), logs)

    def growth(rule):  # geometric mean over seeds, largest d against smallest, over the linear law's d ratio
        g = np.exp(np.log(table[rule]).mean(1))
        return float(g[-1] / g[0] / (dims[-1] / dims[0]))

    metrics = {"capacity_log_slope": float(slope), "capacity_log_r2": float(r2),
               "capacity_exp_minus_power_r2": float(r2 - r_squared(np.log(dims), logs)),
               "capacity_growth_over_linear": growth("modern"), "hebbian_growth_over_linear": growth("hebbian")}
    info = {"capacity_capped_at_max_n": capped,  # then N_max is a lower bound and the growth an underestimate
            "capacity_c_fitted": float(math.exp(4 * slope)),  # N ~ c^((d-1)/4) (the theorem's form, constant unread)
            "nmax_modern": table["modern"].tolist(), "nmax_hebbian": table["hebbian"].tolist()}
    arrays = {"dims": np.array(dims, float), "nmax_modern": table["modern"], "nmax_hebbian": table["hebbian"],
              "fit": np.array([slope, intercept])}
    return metrics, info, arrays


def main():
    run = start_run("metrics", "arrays")
    p = run.params
    ident, ident_info = identities(p["energy"], generator(derive_seed(p["energy"]["seed"], "energy")))
    cap, cap_info, arrays = capacity(p["capacity"])
    metrics = {**ident, **cap}
    info = {**ident_info, **cap_info, "dtype": "float64"}
    write_metrics(run.args.metrics, metrics, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print({k: v for k, v in metrics.items()}, statistics.fmean(cap_info["nmax_modern"][-1]))


if __name__ == "__main__":
    main()
