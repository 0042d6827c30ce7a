"""Held-out reconstruction against density for every autoencoder of one dataset (the Pareto curves), the TopK SAE
at matched density, and the closed-form lifted error checked against the explicit d x d computation.

Errors are the lifted error ||x x^T - X_hat||_F^2 on unit-normalised held-out activations (1 = nothing
reconstructed), density the mean per-latent Hoyer density over batches of the training batch size.
"""
import numpy as np
import torch

from shared.io.smoke import capped
from shared.pipeline.run import start_run, write_metrics

from .common import bae_metrics, load_autoencoders, load_split, topk_metrics


def explicit_training_error(model, x):
    """The training error computed the slow way, from the d x d matrices: ||x x^T - sum_j c_j l_j r_j^T||_F^2, or for
    the ordered kinds its mean over all n prefixes (running sums of the rank-1 terms)."""
    if not model.ordered:
        return model.explicit_error(x)
    c = model.coefficients(model.latents(x))
    residual = x[:, :, None] * x[:, None, :]  # X - (the prefix's reconstruction), one rank-1 term at a time:
    total = torch.zeros(len(x), dtype=x.dtype, device=x.device)  # (batch, d, d) memory at any n, also at the full tier's 16,384
    for j in capped(range(model.n), model.n, "explicit_error", count_flops=False):  # a smoke run: 3 latents
        residual = residual - c[:, j, None, None] * torch.outer(model.left[j], model.right[j])
        total += residual.pow(2).sum((-2, -1))
    return total / model.n


def matched(curve_h, curve_e, h):
    """The error of a density-error curve at density h, interpolated in log density (clamped at the ends)."""
    order = np.argsort(curve_h)
    return float(np.interp(np.log(h), np.log(np.asarray(curve_h)[order]), np.asarray(curve_e)[order]))


def main():
    run = start_run("checkpoint", "data", "metrics", "arrays")
    args, p = run.args, run.params  # {"batch_size", "identity_points", "compare_kind"}
    x, _, _ = load_split(args.data)
    models, runs, meta = load_autoencoders(args.checkpoint)
    metrics, arrays, bae = {}, {}, {}
    for name, spec in runs.items():
        sae = spec["kind"] == "topk"
        error, density = (topk_metrics if sae else bae_metrics)(models[name], x, p["batch_size"])
        metrics |= {f"{name}.error": error, f"{name}.density": density}
        if not sae:
            bae.setdefault(spec["kind"], []).append((spec["alpha"], error, density))
            with torch.no_grad():  # closed form (the training loss) against the explicit d x d lift
                pts = x[: p["identity_points"]]
                closed, explicit = models[name].lifted_error(pts), explicit_training_error(models[name], pts)
            metrics[f"{name}.closed_form_gap"] = float(((closed - explicit).abs() / explicit.abs()).max())
    for kind, points in bae.items():
        alphas, errors, densities = map(np.array, zip(*sorted(points)))
        arrays |= {f"{kind}_alpha": alphas, f"{kind}_error": errors, f"{kind}_density": densities}
        if alphas[0] == 0 and 1.0 in alphas:  # the penalty at 1 against none
            metrics[f"{kind}.density_ratio_a100"] = float(densities[alphas == 1.0][0] / densities[0])
            metrics[f"{kind}.error_cost_a100"] = float(errors[alphas == 1.0][0] - errors[0])
        metrics[f"{kind}.density_monotone"] = bool(np.all(np.diff(densities) <= p["monotone_slack"]))
        cheap = errors <= errors[0] + p["error_budget"]  # the sparsest model within a small error budget of alpha = 0
        metrics[f"{kind}.sparsest_within_budget"] = float(densities[cheap].min())
    if "mixed_a0.error" in metrics and "vanilla_a0.error" in metrics:
        metrics["mixed_minus_vanilla_a0"] = metrics["mixed_a0.error"] - metrics["vanilla_a0.error"]
    metrics["closed_form_gap_max"] = max(v for k, v in metrics.items() if k.endswith("closed_form_gap"))
    _, errors, densities = map(np.array, zip(*sorted(bae[p["compare_kind"]])))
    topk = sorted((r["k"], n) for n, r in runs.items() if r["kind"] == "topk")
    for k, name in topk:
        metrics[f"{name}.bae_minus_topk"] = matched(densities, errors, metrics[f"{name}.density"]) - metrics[f"{name}.error"]
    arrays |= {"topk_k": np.array([k for k, _ in topk]), "topk_error": np.array([metrics[f"{n}.error"] for _, n in topk]),
               "topk_density": np.array([metrics[f"{n}.density"] for _, n in topk])}
    info = {"dataset": meta["dataset"], "held_out": len(x), "runs": len(runs)}
    write_metrics(args.metrics, metrics, meta, info=info, arrays=arrays, arrays_path=args.arrays)
    for k, v in metrics.items():
        print(k, v)


if __name__ == "__main__":
    main()
