"""Manifolds read from the weights alone (the paper's Fig. 1 analysis), checked against planted ground truth.

Weights only: the mixing Gram matrix G = D^T D (unit columns) of the mixed autoencoder; for a latent i, the
composite quadratic form Q = sym(sum_j |G_ij| l_j r_j^T) over its `neighbours` largest |G_ij| (the released
analysis's weighting; metrics `abs_g.*`, which the claims read and the figure shows) and, beside it, the same form
weighted by the signed G_ij (`signed_g.*`, this replication's convention before issue 47); the eigenvectors of Q's
3 largest |eigenvalues|. Inputs only evaluate: each latent is labelled by the planted component (or the digit) its
held-out activation correlates with most; G groups latents when their top-G neighbours share its label; a planted
circle or triangle is recovered when Q's top eigenvectors span its 3-D subspace (cosines of principal angles),
and a circle's angular order survives when held-out points that carry it, projected on those eigenvectors, go
round in the planted order (circular correlation).
"""
import json

import numpy as np
import torch

from shared.nn.bae import composite_form, mixing_gram, top_subspace
from shared.pipeline.run import start_run, write_metrics

from .common import load_autoencoders, load_split


def correlations(f, targets):
    """|Pearson correlation| of each latent (columns of f) with each target (columns) -> (latents, targets)."""
    f = (f - f.mean(0)) / f.std(0).clamp_min(1e-12)
    t = (targets - targets.mean(0)) / targets.std(0).clamp_min(1e-12)
    return (f.T @ t / len(f)).abs()


def neighbour_purity(gram, labels, assigned, top):
    """Mean over assigned latents of the fraction of their `top` largest-|G| other latents with the same label."""
    g = gram.abs().clone()
    g.fill_diagonal_(-1)
    neighbours = g.topk(top, dim=1).indices
    same = (labels[neighbours] == labels[:, None]).double().mean(1)
    return float(same[assigned].mean())


def circular_correlation(a, b):
    """Jammalamadaka's circular correlation of two angle samples; |.| since a reflection flips its sign."""
    sa, sb = np.sin(a - np.angle(np.exp(1j * a).mean())), np.sin(b - np.angle(np.exp(1j * b).mean()))
    return float(abs((sa * sb).sum() / np.sqrt((sa**2).sum() * (sb**2).sum())))


def angular_agreement(a, b):
    """|mean of exp(i(a - b))|, or of exp(i(a + b)) if larger: 1 when a is b up to a rotation (and a reflection),
    about 1/sqrt(len(a)) for independent angles. Unlike circular_correlation it needs no mean direction, which angles
    spread evenly round the circle do not have (reported beside B6-circle-order's measure, not claimed)."""
    return float(max(abs(np.exp(1j * (a - b)).mean()), abs(np.exp(1j * (a + b)).mean())))


def recover_components(model, gram, corr, components, x, arrays, neighbours, signed):
    """Per planted circle or triangle, from the composite form of the latent that carries it most (labelling only):
    the cosines of the principal angles to its planted subspace and, for a circle, the angular order of its held-out
    points -> (metrics, arrays for the figure). Empty for data without planted manifolds."""
    metrics, out, cosines, orders = {}, {}, [], []
    for c, (name, kind, _) in enumerate(components):
        if kind not in ("circle", "triangle"):
            continue
        q, _ = composite_form(model, int(corr[:, c].argmax()), gram, neighbours, signed=signed)
        values, vectors = top_subspace(q.double(), 3)
        block = torch.from_numpy(arrays["blocks"][c]).double()
        cos = torch.linalg.svdvals(vectors.T @ block)  # cosines of the principal angles
        metrics[f"{name}.subspace_cos"] = float(cos.mean())
        cosines.append(float(cos.mean()))
        on = arrays["amplitude_test"][:, c] > 0
        coords = (x[on] @ vectors).numpy()
        centred = coords - coords.mean(0)
        plane = np.linalg.svd(centred, full_matrices=False)[2][:2]  # the two directions the points spread most in
        xy = centred @ plane.T
        phase = arrays["phase_test"][on, c]
        out |= {f"{name}_xy": xy, f"{name}_phase": phase, f"{name}_eigenvalues": values.numpy()}
        if kind == "circle":
            angle = np.arctan2(xy[:, 1], xy[:, 0])
            metrics[f"{name}.angular_order"] = circular_correlation(angle, phase)
            metrics[f"{name}.angular_agreement"] = angular_agreement(angle, phase)
            orders.append(metrics[f"{name}.angular_order"])
    if cosines:
        metrics |= {"subspace_cos_mean": float(np.mean(cosines)), "subspace_cos_min": float(np.min(cosines)),
                    "angular_order_min": float(np.min(orders))}
    return metrics, out


def main():
    run = start_run("checkpoint", "data", "metrics", "arrays")
    args, p = run.args, run.params  # {"model", "neighbours", "purity_top", "min_correlation"}
    x, arrays, meta = load_split(args.data)
    models, _, meta_ckpt = load_autoencoders(args.checkpoint)
    model = models[p["model"]]
    with torch.no_grad():
        f = model.latents(x)
    planted = "amplitude_test" in arrays
    if planted:
        targets = torch.from_numpy(arrays["amplitude_test"]).double()
        components = json.loads(meta["components"])
    else:  # digits: one-hot labels
        labels_y = torch.from_numpy(arrays["y_test"])
        targets = torch.nn.functional.one_hot(labels_y, int(labels_y.max()) + 1).double()
        components = [[f"digit{c}", "class", 0] for c in range(targets.shape[1])]
    corr = correlations(f, targets)
    strength, labels = corr.max(1)
    assigned = strength >= p["min_correlation"]
    gram = mixing_gram(model).double()
    shares = torch.bincount(labels[assigned], minlength=targets.shape[1]).double() / assigned.sum()
    metrics = {"assigned_latents": int(assigned.sum()),
               "gram_purity": neighbour_purity(gram, labels, assigned, p["purity_top"]),
               "gram_purity_chance": float((shares**2).sum())}
    metrics["gram_purity_over_chance"] = metrics["gram_purity"] / metrics["gram_purity_chance"]
    out = {"gram": gram[assigned][:, assigned].numpy(), "gram_labels": labels[assigned].numpy()}

    for convention, signed in (("abs_g", False), ("signed_g", True)):
        found, arrays_found = recover_components(model, gram, corr, components, x, arrays, p["neighbours"], signed)
        metrics |= {f"{convention}.{k}": v for k, v in found.items()}
        if not signed:
            out |= arrays_found
    info = {"dataset": meta_ckpt["dataset"], "model": p["model"], "held_out": len(x)}
    write_metrics(args.metrics, metrics, meta_ckpt, info=info, arrays=out, arrays_path=args.arrays)
    for k, v in metrics.items():
        print(k, v)


if __name__ == "__main__":
    main()
