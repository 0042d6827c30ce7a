"""The learned preconditioner against theory (claims C1, C2, C4, C5, C6, C7 and the identity I1).

For each trained one-layer LSA, Gamma = a B^T + c u^T (shared.nn.linear_attention.effective_preconditioner):
    iso     ||Gamma - eta* I|| / ||eta* I||, eta* = n / (n + d + 1 + sigma^2); learned eta = mean diagonal
    noniso  ||Gamma - Gamma*|| / ||Gamma*||, Gamma* = gamma_star(Sigma, Sigma^-1) = eta* Sigma^-1; and the error of
            the best scalar multiple of I, ||Gamma* - (tr Gamma*/d) I|| / ||Gamma*||
    relu    ||Gamma - eta_f I|| / ||eta_f I||, eta_f = E[y_q x_q^T g] / E[(x_q^T g)^2] by Monte Carlo
    all     the nuisance sizes ||B^T u|| / ||Gamma||, |a| ||c|| / ||Gamma||, and the identity
            forward = x_q^T Gamma g + nuisance terms in float64 (max |diff| / max |forward|).
Where there are several seeds, every metric is the worst seed.
"""
import numpy as np
import torch

from shared.data.icl_regression import embed
from shared.nn import icl_baselines as bl
from shared.pipeline.run import load_models, start_run, write_metrics
from shared.stats import rel_err

from .common import EXPERIMENTS, law, prompts
from .model import preconditioner, reference_prediction


def identity_err(model, spec, count, generator):
    batch = prompts(spec, count, generator, dtype=torch.float64)
    model = model.double()
    with torch.no_grad():
        forward = model(embed(batch))
    ref = reference_prediction(model, batch)
    return float((forward - ref).abs().max() / forward.abs().max())


def main():
    run = start_run(*EXPERIMENTS, "metrics", "arrays")
    p = run.params
    loaded = {e: load_models(getattr(run.args, e)) for e in EXPERIMENTS}
    main_cfg = p["main"]
    m, arrays, nuisance, ident = {}, {}, [], []
    gen = run.generator(0, "identity")

    iso_models, iso_specs, meta = loaded["iso"]
    eta_rows = []
    iso_err_main = []
    for name, model in iso_models.items():
        s = iso_specs[name]
        gamma, nu = preconditioner(model)
        nuisance += [nu["b_t_u"], nu["a_c"]]
        ident.append(identity_err(model, s, p["identity_prompts"], gen))
        eta = bl.eta_star(s["n"], s["d"], s["sigma"])
        eye = torch.eye(s["d"], dtype=torch.float64)
        learned = float(torch.diagonal(gamma).mean())
        eta_rows.append((s["d"], s["n"], s["sigma"], s["seed"], learned, eta, rel_err(gamma, eta * eye, "l2")))
        if all(s[k] == main_cfg[k] for k in ("d", "n", "sigma")):
            iso_err_main.append(rel_err(gamma, eta * eye, "l2"))
            arrays.setdefault("iso_gamma", gamma.numpy())
            arrays.setdefault("iso_star", (eta * eye).numpy())
    rows = np.array(eta_rows, dtype=float)
    arrays["eta_rows"] = rows  # columns: d, n, sigma, seed, learned eta, eta*, relative Gamma error
    m["iso_gamma_rel_err"] = max(iso_err_main)
    m["eta_rel_err_max"] = float(np.max(np.abs(rows[:, 4] - rows[:, 5]) / rows[:, 5]))
    m["iso_gamma_rel_err_max_grid"] = float(rows[:, 6].max())
    m["iso_offdiag_max_rel"] = max(
        float((preconditioner(mod)[0] - torch.diag(torch.diagonal(preconditioner(mod)[0]))).abs().max()
              / torch.diagonal(preconditioner(mod)[0]).mean()) for mod in iso_models.values())

    non_models, non_specs, _ = loaded["noniso"]
    errs, scalar_errs = [], []
    for name, model in non_models.items():
        s = non_specs[name]
        gamma, nu = preconditioner(model)
        nuisance += [nu["b_t_u"], nu["a_c"]]
        ident.append(identity_err(model, s, p["identity_prompts"], gen))
        if s["condition"] != p["noniso_condition"]:
            continue
        cov, w_cov = law(s)
        star = bl.gamma_star(cov, w_cov, s["n"], s["sigma"])
        scalar = torch.trace(star) / s["d"] * torch.eye(s["d"], dtype=torch.float64)
        errs.append(rel_err(gamma, star, "l2"))
        scalar_errs.append(rel_err(scalar, star, "l2"))
        m["noniso_star_vs_eta_inv_cov"] = rel_err(star, bl.eta_star(s["n"], s["d"], s["sigma"]) * torch.linalg.inv(cov), "l2")
        arrays.setdefault("noniso_gamma", gamma.numpy())
        arrays.setdefault("noniso_star", star.numpy())
    m["noniso_gamma_rel_err"] = max(errs)
    m["noniso_scalar_rel_err"] = min(scalar_errs)
    m["noniso_scalar_over_gamma_err"] = min(scalar_errs) / max(errs)

    relu_models, relu_specs, _ = loaded["relu"]
    r_errs, off = [], []
    for name, model in relu_models.items():
        s = relu_specs[name]
        gamma, nu = preconditioner(model)
        nuisance += [nu["b_t_u"], nu["a_c"]]
        ident.append(identity_err(model, s, p["identity_prompts"], gen))
        mc_gen = run.generator(s["seed"], "eta_f")
        num = den = 0.0
        for size in [p["chunk"]] * max(1, p["eta_f_prompts"] // p["chunk"]):
            b = prompts(s, size, mc_gen, dtype=torch.float64)
            xs, ys, xq = b.x[:, :-1], b.y[:, :-1], b.x[:, -1]
            pred = torch.einsum("bd,bd->b", xq, torch.einsum("bn,bnd->bd", ys, xs) / s["n"])
            num += float((b.y[:, -1] * pred).sum())
            den += float((pred * pred).sum())
        eta_f = num / den
        eye = torch.eye(s["d"], dtype=torch.float64)
        r_errs.append(rel_err(gamma, eta_f * eye, "l2"))
        off.append(float((gamma - torch.diag(torch.diagonal(gamma))).abs().max() / eta_f))
        m.setdefault("relu_eta_f", eta_f)
        m.setdefault("relu_eta_learned", float(torch.diagonal(gamma).mean()))
        m.setdefault("relu_eta_star_linear", bl.eta_star(s["n"], s["d"], s["sigma"]))
        arrays.setdefault("relu_gamma", gamma.numpy())
        arrays.setdefault("relu_star", (eta_f * eye).numpy())
    m["relu_gamma_rel_err"] = max(r_errs)
    m["relu_offdiag_max_rel"] = max(off)

    m["nuisance_max"] = max(nuisance)
    m["identity_rel_err"] = max(ident)
    info = {"main": main_cfg, "noniso_condition": p["noniso_condition"], "identity_dtype": "float64",
            "eta_f_prompts": p["eta_f_prompts"]}
    write_metrics(run.args.metrics, m, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(m)


if __name__ == "__main__":
    main()
