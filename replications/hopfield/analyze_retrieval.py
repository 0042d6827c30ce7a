"""One-step retrieval and the fixed-point regimes on stored MNIST-5k images (claims R1-R5, identity I5, controls K1,
K4). Patterns: training images centred on the mean image and unit-normalised (M = 1), float64.

  * One step from a half-masked stored image (a random half of its pixels set to the mean image): the state is
    `close` when |xi_new - x_i| <= close, for each N stored and beta; the second update's move over the first's.
  * One step from the stored image itself: its error against 2 M (N - 1) exp(-beta Delta_i) (I5).
  * Regimes: the states iterated to a fixed point from the stored images themselves, for each beta; at the fixed point
    the number of patterns holding 90% of the softmax mass (k90) says global (k90 >= N / 2), metastable
    (2 <= k90 < N / 2) or single pattern (k90 = 1). A metastable state's class purity is the largest softmax mass on
    one digit class.
"""
import numpy as np
import torch

from shared.io.runtime import generator
from shared.io.smoke import capped
from shared.nn.hopfield import hopfield_update, mass_count, one_step_bound
from shared.pipeline.run import derive_seed, start_run, write_metrics

from .common import load_digits, stored_patterns


def one_step(X, r, gen):
    """Arrays over beta: fraction close after one update, and the median second-over-first move."""
    q_idx = torch.arange(min(r["queries"], len(X)))
    target = X[q_idx]
    keep = torch.rand(target.shape, generator=gen, dtype=torch.float64) >= r["mask_fraction"]
    q = target * keep
    close, ratio, correct = [], [], []
    for beta in r["betas"]:
        x1 = hopfield_update(X, q, beta)
        x2 = hopfield_update(X, x1, beta)
        close.append(float(((x1 - target).norm(dim=-1) <= r["close"]).double().mean()))
        correct.append(float(((x1 @ X.T).argmax(-1) == q_idx).double().mean()))
        ratio.append(float(((x2 - x1).norm(dim=-1) / (x1 - q).norm(dim=-1)).median()))
    return np.array(close), np.array(ratio), np.array(correct)


def bound_violations(X, betas):
    """Stored patterns whose one-step error from themselves exceeds the bound (with 1e-12 of rounding)."""
    count = 0
    for beta in betas:
        err = (hopfield_update(X, X, beta) - X).norm(dim=-1)
        count += int((err > one_step_bound(X, beta) + 1e-12).sum())
    return count


def fixed_points(X, start, beta, tol, max_steps):
    """shared.nn.hopfield.iterate_to_fixed_point, its steps through the smoke cap (a smoke run iterates a few)."""
    state = start
    for _ in capped(range(max_steps), max_steps, "fixed_point", count_flops=False):
        new = hopfield_update(X, state, beta)
        moved, state = (new - state).norm(dim=-1).max(), new
        if moved <= tol:
            break
    return state


def regimes(X, labels, r):
    n = len(X)
    start = X[: r["regime_queries"]]
    onehot = torch.nn.functional.one_hot(labels, 10).double()
    rows = {"global": [], "metastable": [], "single": [], "purity": [], "not_converged": [], "spread": []}
    for beta in r["betas"]:
        fixed = fixed_points(X, start, beta, r["tol"], r["max_steps"])
        p = torch.softmax(beta * fixed @ X.T, -1)
        k90 = mass_count(p)
        meta = (k90 >= 2) & (k90 < n / 2)
        purity = (p @ onehot).max(-1).values
        rows["global"].append(float((k90 >= n / 2).double().mean()))
        rows["metastable"].append(float(meta.double().mean()))
        rows["single"].append(float((k90 == 1).double().mean()))
        rows["purity"].append(float(purity[meta].mean()) if meta.any() else float("nan"))
        moved = (hopfield_update(X, fixed, beta) - fixed).norm(dim=-1)
        rows["not_converged"].append(float((moved > r["tol"]).double().mean()))
        rows["spread"].append(float((fixed - fixed.mean(0)).norm(dim=-1).max()))
    return {k: np.array(v) for k, v in rows.items()}


def main():
    run = start_run("data", "metrics", "arrays")
    r = run.params["retrieval"]
    data = load_digits(run.args.data)
    betas = r["betas"]
    b = {name: betas.index(r[name]) for name in ("main_beta", "small_beta")}
    arrays, info = {"betas": np.array(betas, float), "n_stored": np.array(r["n_stored"], float)}, {}
    for n in r["n_stored"]:
        X, idx = stored_patterns(data["x_train"], n, generator(derive_seed(r["seed"], f"patterns_{n}")))
        close, ratio, correct = one_step(X, r, generator(derive_seed(r["seed"], f"mask_{n}")))
        arrays[f"close_n{n}"], arrays[f"ratio_n{n}"], arrays[f"correct_n{n}"] = close, ratio, correct
        if n == r["main_n"]:
            main_X, main_labels = X, data["y_train"][idx]
    reg = regimes(main_X, main_labels, r)
    arrays.update({f"regime_{k}": v for k, v in reg.items()})
    meta_at = int(np.argmax(reg["metastable"]))
    n = r["main_n"]
    metrics = {
        "close_main": float(arrays[f"close_n{n}"][b["main_beta"]]),
        "close_small_beta": float(arrays[f"close_n{n}"][b["small_beta"]]),
        "close_largest_n": float(arrays[f"close_n{max(r['n_stored'])}"][b["main_beta"]]),
        "second_over_first_main": float(arrays[f"ratio_n{n}"][b["main_beta"]]),
        "bound_violations": bound_violations(main_X, betas),
        "global_small_beta": float(reg["global"][b["small_beta"]]),
        "metastable_max": float(reg["metastable"][meta_at]),
        "metastable_purity": float(reg["purity"][meta_at]),
        "single_main": float(reg["single"][b["main_beta"]]),
        "single_small_beta": float(reg["single"][b["small_beta"]]),
        "purity_small_beta": float((torch.softmax(r["small_beta"] * main_X[:1] @ main_X.T, -1)
                                    @ torch.nn.functional.one_hot(main_labels, 10).double()).max()),
        "not_converged_max": float(reg["not_converged"].max()),
    }
    info = {"beta_of_metastable_max": betas[meta_at], "main_beta": r["main_beta"], "main_n": n,
            "mask_fraction": r["mask_fraction"], "queries": r["queries"], "regime_queries": r["regime_queries"],
            "fixed_point_spread_small_beta": float(reg["spread"][b["small_beta"]]),
            "correct_main": float(arrays[f"correct_n{n}"][b["main_beta"]])}
    write_metrics(run.args.metrics, metrics, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(metrics, info)


if __name__ == "__main__":
    main()
