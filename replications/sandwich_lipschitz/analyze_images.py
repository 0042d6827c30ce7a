"""The image classifiers (claims M1-M6, E1-E3, identities I4-I5, controls K3-K4).

  * Clean accuracy; certified accuracy at each l2 radius eps by the margin rule (margin > sqrt(2) L eps) with L =
    gamma for the sandwich and orthogonal networks, and for the plain MLP the product of its layers' spectral norms
    (the generic certificate); empirical robust accuracy under an l2 PGD attack at each eps.
  * Soundness: no test point certified at eps is misclassified by the attack at eps.
  * Tightness of the bound (float64): the largest Jacobian spectral norm at `jacobian_points` test images, over
    gamma. It is a lower bound of the network's Lipschitz constant, so it never exceeds 1 for a bounded network.
"""
import statistics

import numpy as np
import torch

from shared.nn.sandwich import jacobian_spectral_norms
from shared.pipeline.run import load_models, start_run, write_metrics

from .common import evaluate, load_image_data


def plain_lipschitz_bound(model):
    """The product of the spectral norms of the plain MLP's linear maps (ReLU is 1-Lipschitz)."""
    layers = [*model.hidden, model.readout]
    return float(np.prod([torch.linalg.matrix_norm(layer.weight.double(), 2).item() for layer in layers]))


def main():
    run = start_run("checkpoint", "untrained", "data", "metrics", "arrays")
    p = run.params
    e, a = p["images"], p["analysis"]
    data = load_image_data(run.args.data)
    x, y = data["x_test"], data["y_test"]
    models, specs, meta = load_models(run.args.checkpoint)
    untrained, _, _ = load_models(run.args.untrained)
    eps_list = a["eps"]

    per, broken, jac_ratio = {}, 0, {}
    for name, model in models.items():
        s = specs[name]
        lipschitz = s["gamma"] if s["kind"] != "plain" else plain_lipschitz_bound(model)
        r = evaluate(model, x, y, eps_list, a["pgd_steps"], lipschitz)
        per[name] = {"clean": (r["margin"] > 0).double().mean().item(), "lipschitz_bound": lipschitz,
                     **{f"cert_{eps:g}": r[f"cert_{eps:g}"].double().mean().item() for eps in eps_list},
                     **{f"pgd_{eps:g}": r[f"pgd_{eps:g}"].double().mean().item() for eps in eps_list}}
        broken += sum(int((r[f"cert_{eps:g}"] & ~r[f"pgd_{eps:g}"]).sum()) for eps in eps_list)
        if s["kind"] != "plain":
            norms = jacobian_spectral_norms(model.double(), x[:a["jacobian_points"]].double())
            jac_ratio[name] = norms.max().item() / s["gamma"]
            model.float()

    def mean(kind, gamma, key):
        return statistics.fmean(per[n][key] for n in per if specs[n]["kind"] == kind and specs[n]["gamma"] == gamma)

    m = {}
    keys = ["clean", *(f"{k}_{eps:g}" for k in ("cert", "pgd") for eps in eps_list)]
    for key in keys:
        for g in e["gammas"]:
            for kind in e["kinds"]:
                m[f"{kind}_g{g:g}_{key}"] = mean(kind, g, key)
        m[f"plain_{key}"] = mean("plain", None, key)
    g0, g1 = min(e["gammas"]), max(e["gammas"])
    ce, pe = a["claim_eps"]["certified"], a["claim_eps"]["attack"]
    m["cert_sandwich_minus_orthogonal"] = m[f"sandwich_g{g0:g}_cert_{ce:g}"] - m[f"orthogonal_g{g0:g}_cert_{ce:g}"]
    m["pgd_sandwich_minus_orthogonal"] = m[f"sandwich_g{g0:g}_pgd_{pe:g}"] - m[f"orthogonal_g{g0:g}_pgd_{pe:g}"]
    m["cert_sandwich"] = m[f"sandwich_g{g0:g}_cert_{ce:g}"]
    m["pgd_sandwich_minus_plain"] = m[f"sandwich_g{g0:g}_pgd_{pe:g}"] - m[f"plain_pgd_{pe:g}"]
    m["clean_large_minus_small_gamma"] = m[f"sandwich_g{g1:g}_clean"] - m[f"sandwich_g{g0:g}_clean"]
    m["cert_small_minus_large_gamma"] = m[f"sandwich_g{g0:g}_cert_{ce:g}"] - m[f"sandwich_g{g1:g}_cert_{ce:g}"]
    m["clean_plain_minus_sandwich"] = m["plain_clean"] - m[f"sandwich_g{g0:g}_clean"]
    m["plain_cert"] = m[f"plain_cert_{ce:g}"]
    m["plain_lipschitz_bound_min"] = min(per[n]["lipschitz_bound"] for n in per if specs[n]["kind"] == "plain")
    m["plain_pgd_strongest"] = m[f"plain_pgd_{max(eps_list):g}"]
    m["certified_but_broken"] = broken
    m["jacobian_over_gamma_max"] = max(jac_ratio.values())
    m["sandwich_small_gamma_jacobian_over_gamma"] = statistics.fmean(
        v for n, v in jac_ratio.items() if specs[n]["kind"] == "sandwich" and specs[n]["gamma"] == g0)
    first = [n for n in per if specs[n]["kind"] == "plain" and specs[n]["seed"] == e["seeds"][0]]
    untrained_rows = [evaluate(model, x, y, [ce, pe], a["pgd_steps"], specs[n]["gamma"])
                      for n, model in untrained.items() if specs[n]["gamma"] == g0]
    m["untrained_sandwich_cert"] = max(r[f"cert_{ce:g}"].double().mean().item() for r in untrained_rows)
    m["untrained_sandwich_pgd_minus_plain"] = max(r[f"pgd_{pe:g}"].double().mean().item() for r in untrained_rows) \
        - per[first[0]][f"pgd_{pe:g}"]

    arrays = {"names": np.array(sorted(per)), "eps": np.array(eps_list),
              "cert": np.array([[per[n][f"cert_{eps:g}"] for eps in eps_list] for n in sorted(per)]),
              "pgd": np.array([[per[n][f"pgd_{eps:g}"] for eps in eps_list] for n in sorted(per)]),
              "clean": np.array([per[n]["clean"] for n in sorted(per)])}
    info = {"test_images": len(x), "pgd_steps": a["pgd_steps"], "jacobian_points": a["jacobian_points"],
            "per_model": per}
    write_metrics(run.args.metrics, m, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(m)


if __name__ == "__main__":
    main()
