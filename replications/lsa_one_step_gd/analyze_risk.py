"""Test risk of the trained LSA against theory and the closed-form baselines (claims C3, C8 and a control).

On fresh prompts (eval_prompts per run, float64 model): the LSA's Monte Carlo risk, one-step GD with eta* (or
Gamma*), ridge with lambda = sigma^2 (the Bayes posterior mean for w ~ N(0, I)) and least squares; the analytic
risk R(Gamma) (shared.nn.icl_baselines.analytic_risk) of the learned preconditioner against the minimum R(Gamma*)
= d (1 - eta*) + sigma^2.
"""
import numpy as np
import torch

from shared.data.icl_regression import embed
from shared.nn import icl_baselines as bl
from shared.pipeline.run import load_models, start_run, write_metrics

from .common import EXPERIMENTS, law, prompts
from .model import preconditioner


def mc_risks(model, spec, p, generator):
    """{method: (risk, standard error)} on the same eval_prompts fresh prompts."""
    model = model.double()
    cov, w_cov = law(spec)
    star = bl.gamma_star(cov, w_cov, spec["n"], spec["sigma"])
    sums = {k: [] for k in ("lsa", "gd_star", "ridge", "ols")}
    for _ in range(max(1, p["eval_prompts"] // p["chunk"])):
        b = prompts(spec, p["chunk"], generator, dtype=torch.float64)
        target = b.y[:, -1]
        with torch.no_grad():
            preds = {"lsa": model(embed(b)), "gd_star": bl.one_step_gd(b, star),
                     "ridge": bl.ridge(b, max(spec["sigma"] ** 2, 1e-8)), "ols": bl.ols(b)}
        for k, v in preds.items():
            sums[k].append((v - target) ** 2)
    out = {}
    for k, v in sums.items():
        err = torch.cat(v)
        out[k] = (float(err.mean()), float(err.std() / err.numel() ** 0.5))
    return out


def main():
    run = start_run(*EXPERIMENTS, "metrics", "arrays")
    p = run.params
    main_cfg = p["main"]
    models, specs, meta = load_models(run.args.iso)
    m, rows = {}, []
    mc_err, excess, ridge_ratio, control = [], [], [], []
    for name, model in models.items():
        s = specs[name]
        if s["d"] != main_cfg["d"] or s["sigma"] != main_cfg["sigma"]:
            continue
        cov, w_cov = law(s)
        theory = s["d"] * (1 - bl.eta_star(s["n"], s["d"], s["sigma"])) + s["sigma"] ** 2
        gamma, _ = preconditioner(model)
        analytic = bl.analytic_risk(gamma, cov, w_cov, s["n"], s["sigma"])
        r = mc_risks(model, s, p, run.generator(s["seed"], f"eval/{name}"))
        rows.append((s["n"], s["seed"], r["lsa"][0], r["gd_star"][0], r["ridge"][0], r["ols"][0], theory, analytic))
        if s["n"] == main_cfg["n"]:
            mc_err.append(abs(r["lsa"][0] - theory) / theory)
            excess.append(analytic / theory - 1)
            ridge_ratio.append(r["ridge"][0] / r["lsa"][0])
            control.append(abs(r["gd_star"][0] - theory) / theory)
            m.setdefault("lsa_risk_mc", r["lsa"][0])
            m.setdefault("lsa_risk_mc_se", r["lsa"][1])
            m.setdefault("theory_risk", theory)
            m.setdefault("lsa_risk_analytic", analytic)
            m.setdefault("ridge_risk_mc", r["ridge"][0])
            m.setdefault("ols_risk_mc", r["ols"][0])
            m.setdefault("gd_star_risk_mc", r["gd_star"][0])
    m["lsa_risk_mc_rel_err"] = max(mc_err)
    m["lsa_analytic_excess_rel"] = max(excess)
    m["ridge_over_lsa"] = max(ridge_ratio)
    m["gd_star_mc_vs_theory_rel_err"] = max(control)

    non_models, non_specs, _ = load_models(run.args.noniso)
    for name, model in non_models.items():
        s = non_specs[name]
        if s["condition"] != p["noniso_condition"]:
            continue
        cov, w_cov = law(s)
        gamma, _ = preconditioner(model)
        star = bl.gamma_star(cov, w_cov, s["n"], s["sigma"])
        m.setdefault("noniso_analytic_excess_rel",
                     bl.analytic_risk(gamma, cov, w_cov, s["n"], s["sigma"])
                     / bl.analytic_risk(star, cov, w_cov, s["n"], s["sigma"]) - 1)
    arrays = {"rows": np.array(sorted(rows), dtype=float)}  # n, seed, lsa, gd*, ridge, ols, theory, analytic
    info = {"main": main_cfg, "eval_prompts": p["eval_prompts"], "ridge_lambda": "sigma^2"}
    write_metrics(run.args.metrics, m, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(m)


if __name__ == "__main__":
    main()
