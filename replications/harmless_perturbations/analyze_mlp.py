"""The MLPs: harmless perturbations in the null space of the first layer (and of later layers), against random and
adversarial perturbations; the ReLU's input-dependent expansion of the harmless space; model identification.

Identities are measured in float64 (a float64 copy of each model); what a deployed float32 model predicts is measured
in float32. Harmless perturbations are delta = alpha ||x|| v with v a random unit vector of the layer's null space.
"""
import copy
import statistics

import numpy as np
import torch
import torch.nn.functional as F

from shared.nn.adversarial import pgd_linf
from shared.nn.linear_operators import null_space
from shared.pipeline.run import load_models, start_run, write_metrics
from shared.stats import psnr, rel_err

from .common import load_data, smallest_flipping_attack, test_subset, unit_directions, untrained_flip_rate

UNCHANGED = 0.99  # "the prediction is kept" for a perturbation norm: at least 99% of the images keep theirs
ID_TOL = 1e-6     # a model accepts an identification probe when its logits move by less than this (relative)


def predictions(model, x):
    with torch.no_grad():
        return model(x.float()).argmax(1)


@torch.no_grad()
def local_harmless(model64, x, generator):
    """Per image: the dimension of the span of the exact harmless set of the first Linear + ReLU at x (the null space
    of the active rows of W1: inactive units may move as long as they stay negative), and the largest logit change
    (relative) of a step along a random direction of that span, scaled to keep every inactive unit negative."""
    layer = model64.layers[0]
    w = layer.weight
    dims, changes, steps = [], [], []
    for xi in x:
        z = layer(xi)
        active = z > 0
        basis = null_space(w[active])
        dims.append(basis.shape[1])
        v = unit_directions(basis, 1, generator)[0]
        push = w[~active] @ v  # how the inactive pre-activations move per unit step
        room = (-z[~active] / push)[push > 0]
        step = 0.5 * float(room.min()) if room.numel() else 1.0
        changes.append(float(rel_err(model64((xi + step * v)[None]), model64(xi[None]), per_sample=True)[0]))
        steps.append(step / float(xi.norm()))
    return np.array(dims), max(changes), np.array(steps)


def main():
    run = start_run("checkpoint", "data", "metrics", "arrays")
    args, p = run.args, run.params  # the `analysis` section of config.yaml
    models, _, meta = load_models(args.checkpoint)
    data = load_data(args.data)
    x32, y = test_subset(data, p["n_images"], p["subset_seed"])
    x = x32.double()
    norms = x.norm(dim=1, keepdim=True)
    g = torch.Generator().manual_seed(p["subset_seed"])
    names = sorted(models)
    model = models[names[0]]
    model64 = {n: copy.deepcopy(m).double() for n, m in models.items()}
    m64 = model64[names[0]]

    # the first layer's null space: input-independent, unbounded harmless perturbations (H1, H2)
    w1 = m64.layers[0].weight
    basis = null_space(w1)
    d, h1 = w1.shape[1], w1.shape[0]
    with torch.no_grad():
        logits64 = m64(x)
    pred = predictions(model, x32)
    acc_clean = float((pred == y).float().mean())
    curves = {"harmless_f64": [], "harmless_f32_kept": [], "random_f32_kept": [], "random_f32_acc": [],
              "harmless_f64_median": [], "random_f64_median": []}
    harmless_max = 0.0
    for alpha in p["alphas"]:
        delta = alpha * norms * unit_directions(basis, len(x), g)
        noise = torch.randn(x.shape, generator=g, dtype=x.dtype)
        noise = alpha * norms * noise / noise.norm(dim=1, keepdim=True)
        with torch.no_grad():
            change = rel_err(m64(x + delta), logits64, per_sample=True)
            change_random = rel_err(m64(x + noise), logits64, per_sample=True)
        harmless_max = max(harmless_max, float(change.max()))
        curves["harmless_f64"].append(float(change.max()))
        curves["harmless_f64_median"].append(float(change.median()))
        curves["random_f64_median"].append(float(change_random.median()))
        curves["harmless_f32_kept"].append(float((predictions(model, x + delta) == pred).float().mean()))
        pred_random = predictions(model, x + noise)
        curves["random_f32_kept"].append(float((pred_random == pred).float().mean()))
        curves["random_f32_acc"].append(float((pred_random == y).float().mean()))
    alphas = list(p["alphas"])
    kept = [a for a, k in zip(alphas, curves["harmless_f32_kept"]) if k >= UNCHANGED]
    i10 = min(range(len(alphas)), key=lambda i: abs(np.log(alphas[i] / p["id_alpha"])))

    # adversarial perturbations: the smallest L-inf PGD radius of the grid that flips each prediction (H5)
    adv_delta, adv_eps, attacked = smallest_flipping_attack(model, x32, p["eps_grid"], p["pgd_steps"])
    flipped = ~torch.isnan(adv_eps)
    flip_rate = float((adv_eps <= p["flip_eps"]).float().mean())
    x_fgsm = pgd_linf(model, x32, pred, p["flip_eps"], 1)
    fgsm_rate = float((predictions(model, x_fgsm) != pred).float().mean())
    adv_l2 = adv_delta[flipped].double().norm(dim=1)
    adv_l2_median = float(adv_l2.median()) if flipped.any() else float("nan")
    harmless_l2 = max(kept) * float(norms.median()) if kept else 0.0
    adv_null_share = float(((adv_delta[flipped].double() @ basis).norm(dim=1) / adv_l2).pow(2).mean()) \
        if flipped.any() else float("nan")
    adv_curve = []
    for x_adv in attacked:
        x_adv = x_adv.double()
        with torch.no_grad():
            adv_curve.append((float(((x_adv - x).norm(dim=1) / norms[:, 0]).median()),
                              float(rel_err(m64(x_adv), logits64, per_sample=True).median())))

    # the input gradient W1^T (...) lies in W1's row space: adversarial directions have no harmless component
    xg = x.clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(F.cross_entropy(m64(xg), y, reduction="sum"), xg)
    grad_null = float(((grad @ basis).norm(dim=1) / grad.norm(dim=1)).max())

    # harmless but visible (H4): a perturbation as large as the image, and an image moved towards another digit
    delta_vis = p["psnr_alpha"] * norms * unit_directions(basis, len(x), g)
    psnr_vis = psnr(x + delta_vis, x, per_sample=True)
    kept_vis = predictions(model, x + delta_vis) == pred
    visible_share = float(((psnr_vis < 20) & kept_vis).float().mean())
    target = x.roll(1, 0)  # the next image of the random subset: mostly another digit
    morph = x + (target - x) @ basis @ basis.T  # x + the harmless part of (target - x)
    morph_kept = float((predictions(model, morph) == pred).float().mean())
    closer = float(((morph - target).norm(dim=1) < (morph - x).norm(dim=1)).float().mean())

    # later layers: the null space of each later Linear, on that layer's input (feature-level perturbations)
    later_max, later_dims = 0.0, {}
    for upto in range(1, len(m64.layers) + 1):
        w = m64.layers[upto].weight if upto < len(m64.layers) else m64.fc.weight
        with torch.no_grad():
            feats = m64.features(x, upto)
            b = null_space(w)
            later_dims[upto] = (b.shape[1], w.shape[1])
            hd = max(alphas) * feats.norm(dim=1, keepdim=True) * unit_directions(b, len(x), g)
            later_max = max(later_max, float(rel_err(m64.head(feats + hd, upto), logits64, per_sample=True).max()))
    fc_null, _ = later_dims[len(m64.layers)]

    # non-linear layers: the ReLU enlarges the harmless space at each input (H3)
    n_local = min(len(x), 100)
    local_dims, local_change, local_steps = local_harmless(m64, x[:n_local], g)
    jac_null = d - int(torch.linalg.matrix_rank(torch.func.jacrev(m64)(x[0])))

    # model identification (H6): each model's harmless probe moves only its own logits
    correct, cross_acc, cross_kept, cross_row, cross_w = 0, [], [], [], []
    nulls = {n: null_space(model64[n].layers[0].weight) for n in names}
    for a in names:
        probe = x + p["id_alpha"] * norms * unit_directions(nulls[a], len(x), g)
        accepted = []
        for b in names:
            with torch.no_grad():
                change = rel_err(model64[b](probe), model64[b](x), per_sample=True)
            if float(change.median()) < ID_TOL:
                accepted.append(b)
            if b != a:
                pb = predictions(models[b], probe)
                cross_acc.append(float((pb == y).float().mean()))
                cross_kept.append(float((pb == predictions(models[b], x32)).float().mean()))
                step = probe - x  # its share of energy in B's row space (the part B sees; 1 - null share)
                cross_row.append(float((1 - ((step @ nulls[b]).norm(dim=1) / step.norm(dim=1)).pow(2)).mean()))
                noise = torch.randn(step.shape, generator=g, dtype=step.dtype)
                noise = noise * step.norm(dim=1, keepdim=True) / noise.norm(dim=1, keepdim=True)
                w_b = model64[b].layers[0].weight  # how far B's first layer moves, against a random step
                cross_w.append(float(((step @ w_b.T).norm(dim=1) / (noise @ w_b.T).norm(dim=1)).median()))
        correct += accepted == [a]

    metrics = {
        "clean_acc": acc_clean,
        "first_null_dim": basis.shape[1],
        "first_null_minus_structural": basis.shape[1] - (d - h1),
        "first_null_ratio": basis.shape[1] / d,
        "first_null_residual": float((w1 @ basis).abs().max() / w1.abs().max()),
        "harmless_logit_rel_change_max": harmless_max,
        "harmless_kept_at_max_alpha": curves["harmless_f32_kept"][-1],
        "random_acc_at_id_alpha": curves["random_f32_acc"][i10],
        "random_kept_at_id_alpha": curves["random_f32_kept"][i10],
        "pgd_flip_rate": flip_rate,
        "pgd_flip_rate_untrained": untrained_flip_rate(model, x32, p),
        "fgsm_flip_rate": fgsm_rate,
        "harmless_to_adversarial_l2_ratio": harmless_l2 / adv_l2_median if flipped.any() else 0.0,
        "grad_null_component_max": grad_null,
        "visible_harmless_share": visible_share,
        "psnr_db_median": float(psnr_vis.median()),
        "later_layers_logit_rel_change_max": later_max,
        "fc_null_dim": fc_null,
        "relu_expansion_min": int(local_dims.min()) - basis.shape[1],
        "relu_expansion_std": float(local_dims.std()),
        "local_harmless_logit_rel_change_max": local_change,
        "identification_acc": correct / len(names),
        "cross_model_acc": statistics.fmean(cross_acc),
    }
    info = {
        "images": len(x), "models": names, "first_layer": [h1, d], "alphas": alphas,
        "harmless_f32_kept": curves["harmless_f32_kept"], "random_f32_kept": curves["random_f32_kept"],
        "random_f32_acc": curves["random_f32_acc"], "harmless_f64_max": curves["harmless_f64"],
        "largest_kept_alpha": max(kept) if kept else None, "harmless_l2": harmless_l2,
        "adversarial_l2_median": adv_l2_median, "adversarial_linf_eps_median": float(adv_eps[flipped].median())
        if flipped.any() else None, "adversarial_flipped_within_grid": float(flipped.float().mean()),
        "adversarial_null_energy_share": adv_null_share, "image_l2_median": float(norms.median()),
        "morph_kept": morph_kept, "morph_closer_to_target": closer,
        "morph_psnr_to_target_median": float(psnr(morph, target, per_sample=True).median()),
        "later_null_dims": {f"layer{k}": v for k, v in later_dims.items()},
        "local_dim_mean": float(local_dims.mean()), "local_dim_range": [int(local_dims.min()), int(local_dims.max())],
        "local_step_over_norm_median": float(np.median(local_steps)), "jacobian_null_dim_image0": jac_null,
        "cross_model_kept": statistics.fmean(cross_kept), "identification_tol": ID_TOL,
        "cross_model_row_share": statistics.fmean(cross_row), "random_row_share_expected": h1 / d,
        "cross_model_first_layer_move_vs_random": statistics.fmean(cross_w),
    }
    show = slice(0, 4)
    x_pgd = pgd_linf(model, x32[show], pred[show], p["flip_eps"], p["pgd_steps"])
    noise = torch.randn(x.shape, generator=g, dtype=x.dtype)
    noise = p["psnr_alpha"] * norms * noise / noise.norm(dim=1, keepdim=True)
    panels = {"clean": x[show], "harmless_visible": (x + delta_vis)[show], "harmless_big": (x + 10 * delta_vis)[show],
              "random_visible": (x + noise)[show],
              "pgd": x_pgd.double(), "morph": morph[show], "target": target[show]}
    arrays = {f"img_{k}": v.numpy() for k, v in panels.items()}
    arrays.update({f"pred_{k}": predictions(model, v).numpy() for k, v in panels.items()})
    arrays.update({"alphas": np.array(alphas), **{k: np.array(v) for k, v in curves.items()},
                   "adv_norm": np.array([a for a, _ in adv_curve]), "adv_change": np.array([c for _, c in adv_curve]),
                   "local_dims": local_dims, "first_null_dim": np.array(basis.shape[1]), "jac_null": np.array(jac_null),
                   "psnr_alpha": np.array(p["psnr_alpha"])})
    write_metrics(args.metrics, metrics, meta, info=info, arrays=arrays, arrays_path=args.arrays)
    print(metrics)


if __name__ == "__main__":
    main()
