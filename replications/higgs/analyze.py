"""All four experiments on one trained model (`lm`: the stories transformer, validation cross-entropy on fixed
windows; `mlp`: the MNIST MLP, test cross-entropy), float64: (1) linearity by antithetic noise injection (and, for
the MLP namespace, the quadratic least-squares counterexample), (2) Gaussianisation of weight groups by the RHT,
(3) HIGGS vs RTN vs NF (and the p = 2 grid and the unrotated control) at equal bits, (4) DP vs uniform, greedy and
random bit allocation."""
import math

import numpy as np
import torch
import torch.nn.functional as F

from shared.data import images
from shared.data.tokens import load_tokens
from shared.io.smoke import cap
from shared.nn import quantization as Q
from shared.pipeline.run import load_models, start_run, write_metrics
from shared.train.language_model import evaluate_lm, fixed_windows

from . import common as C
from .model import quantized_layers

METHODS = ("rtn", "nf", "higgs", "higgs_p2", "norot")
SMOKE_EVAL = 512  # images per MLP evaluation in a smoke run


def loss_fn(kind, model, data, p, device):
    if kind == "lm":
        windows = fixed_windows(data, p["eval_windows"], model.n_ctx + 1).to(device)
        return lambda: evaluate_lm(model, windows)
    split = p["eval_split"]  # "train": the loss the MLP was trained to a (near-)stationary point of
    n = SMOKE_EVAL if cap() else None
    x, y = data[f"x_{split}"][:n].double().to(device), data[f"y_{split}"][:n].to(device)
    return lambda: F.cross_entropy(model(x), y).item()


def smoke_sized(p):
    """In a smoke run (shared.io.smoke: training capped), the same analysis on a sliver: every loop once, so that the
    full-size models pass through every code path in minutes on a CPU. Its numbers are not results."""
    if not cap():
        return p
    lin, q = p["linearity"], p["quant"]
    return {**p, "eval_windows": 2, "linearity": {**lin, "calib_t": lin["calib_t"][:1], "tests": 2},
            "quant": {**q, "p2_samples": 4096, "random_allocations": 1}}


def main():
    run = start_run("checkpoint", "history", "data", "metrics", "arrays")
    p = smoke_sized(run.params)
    kind, q = p["model"], p["quant"]
    models, _, meta = load_models(run.args.checkpoint)
    model = models[kind].double().eval().to(run.device)
    if kind == "lm":
        data = load_tokens(run.args.data)[1]
    else:
        data = images.load_images(run.args.data, layout="flat", normalise="centre")
    layers = quantized_layers(model)
    probe = C.Probe(layers, loss_fn(kind, model, data, p, run.device))
    seed = run.seed(p["seed"], "analysis")
    metrics, arrays = {"base_ce": probe.base, "base_ppl": math.exp(probe.base)}, {}
    info = {"layers": {n: list(m.weight.shape) for n, m in layers}, "bits_accounting":
            f"code bits + 16 / {q['group']} (one 16-bit scale per group of {q['group']} weights), every method"}

    # (1) linearity
    lin = C.linearity(probe, p["linearity"], seed)
    alpha = torch.tensor(lin["alpha"], dtype=torch.float64)
    info["device"] = str(run.device)
    for regime in ("small", "large"):
        r = lin[regime]
        metrics.update({f"lin_r2_{regime}": r["r2"], f"lin_r2_ppl_{regime}": r["r2_ppl"],
                        f"lin_relerr_{regime}": r["relerr"]})
        arrays[f"lin_pred_{regime}"], arrays[f"lin_meas_{regime}"] = np.array(r["pred"]), np.array(r["meas"])
    metrics["lin_relerr_growth"] = lin["large"]["relerr"] / lin["small"]["relerr"]
    metrics["alpha_spread"] = float(alpha.max() / alpha.min().clamp(min=1e-30))
    metrics["alpha_min"] = float(alpha.min())
    info["alpha"] = dict(zip(probe.names, lin["alpha"]))
    if kind == "mlp":  # the counterexample: an exactly quadratic loss, where the relative error cannot grow
        quad = C.fit_quadratic(data["x_train"].double(), data["y_train"], p["n_classes"])
        xt, yt = data["x_test"].double(), F.one_hot(data["y_test"], p["n_classes"]).double()
        qprobe = C.Probe(list(zip(("half1", "half2"), quad.layers)),
                         lambda: ((quad(xt) - yt) ** 2).sum(1).mean().item())
        qlin = C.linearity(qprobe, p["linearity"], seed)
        metrics.update({"quad_relerr_small": qlin["small"]["relerr"], "quad_relerr_large": qlin["large"]["relerr"],
                        "quad_relerr_growth": qlin["large"]["relerr"] / qlin["small"]["relerr"],
                        "quad_r2_small": qlin["small"]["r2"]})

    # (2) Gaussianisation
    weights = [m.weight.detach().double().cpu() for _, m in layers]  # quantized on the CPU, evaluated on the device
    gs = C.gaussianisation(weights, q["group"], seed)
    for how, rows in gs.items():
        metrics[f"kurt_abs_{how}"] = float(np.mean([abs(k) for k, _ in rows]))
        metrics[f"ks_{how}"] = float(np.mean([s for _, s in rows]))
        arrays[f"ks_{how}"] = np.array([s for _, s in rows])
        arrays[f"kurt_{how}"] = np.array([k for k, _ in rows])
    metrics["ks_rht_below_none_frac"] = float(np.mean(arrays["ks_rht"] < arrays["ks_none"]))
    metrics["ks_none_over_rht"] = metrics["ks_none"] / metrics["ks_rht"]
    metrics["ks_rht_over_orth"] = metrics["ks_rht"] / metrics["ks_orth"]
    metrics["ks_gauss_none_over_rht"] = metrics["ks_gauss_none"] / metrics["ks_rht"]

    # (3) quantizers at equal bits
    signs = Q.random_signs(q["group"], seed)
    metrics["rht_inverse_err"] = max(float((Q.inverse_rht(Q.rht(w.reshape(-1, q["group"]), signs), signs)
                                            - w.reshape(-1, q["group"])).abs().max()) for w in weights)
    grids = C.make_grids(q["bits"], q["p2_samples"], seed)
    configs, preds, meas = [], [], []
    for (method, bits), grid in grids.items():
        qw = [C.quantize(w, method, grid, q["group"], signs) for w in weights]
        t2 = [Q.relative_error(w, v) for w, v in zip(weights, qw)]
        ce = probe.evaluate(dict(enumerate(qw)))
        key = f"{method}_{bits}"
        pred = float(torch.tensor(t2) @ alpha)
        metrics.update({f"t2_{key}": float(np.mean(t2)), f"t2max_{key}": float(np.max(t2)),
                        f"dce_{key}": ce - probe.base, f"dppl_{key}": math.exp(ce) - math.exp(probe.base),
                        f"pred_{key}": pred})
        arrays[f"t2_{key}"] = np.array(t2)
        configs.append(key)
        preds.append(pred)
        meas.append(ce - probe.base)
    metrics["quant_rank_concordance"] = C.concordance(preds, meas)
    for bits in q["bits"]:
        metrics[f"t2_nf_over_higgs_{bits}"] = float(np.min(arrays[f"t2_nf_{bits}"] / arrays[f"t2_higgs_{bits}"]))
        metrics[f"t2_nf_over_higgs_p2_{bits}"] = float(np.min(arrays[f"t2_nf_{bits}"]
                                                              / arrays[f"t2_higgs_p2_{bits}"]))
        metrics[f"t2_rtn_over_nf_{bits}"] = float(np.min(arrays[f"t2_rtn_{bits}"] / arrays[f"t2_nf_{bits}"]))
        metrics[f"dce_nf_minus_higgs_{bits}"] = metrics[f"dce_nf_{bits}"] - metrics[f"dce_higgs_{bits}"]
        metrics[f"dce_rtn_minus_nf_{bits}"] = metrics[f"dce_rtn_{bits}"] - metrics[f"dce_nf_{bits}"]
        metrics[f"quant_relerr_higgs_{bits}"] = abs(metrics[f"pred_higgs_{bits}"] - metrics[f"dce_higgs_{bits}"]) \
            / abs(metrics[f"dce_higgs_{bits}"])
    arrays["quant_pred"], arrays["quant_meas"] = np.array(preds), np.array(meas)
    info["quant_configs"] = configs

    # (4) bit allocation: HIGGS (p = 1) at each option's bits, measured t^2 per layer and option
    opts = q["options"]
    higgs_q = {b: [C.quantize(w, "higgs", Q.lloyd_max_grid(2 ** b), q["group"], signs) for w in weights]
               for b in opts}
    errors = [[Q.relative_error(w, higgs_q[b][l]) for b in opts] for l, w in enumerate(weights)]
    sizes = [w.numel() for w in weights]
    unit = C.gcd_unit(sizes)
    costs = [[s * b // unit for b in opts] for s in sizes]
    gen = torch.Generator().manual_seed(seed)
    measure = lambda choice: probe.evaluate({l: higgs_q[opts[j]][l] for l, j in enumerate(choice)}) - probe.base
    predict = lambda choice: sum(a * errors[l][j] for l, (a, j) in enumerate(zip(lin["alpha"], choice)))
    avg_bits = lambda choice: sum(s * opts[j] for s, j in zip(sizes, choice)) / sum(sizes)
    for budget_bits in q["budgets"]:
        budget = int(budget_bits * sum(sizes) // unit)
        tag = str(budget_bits).replace(".", "p")
        dp, _ = Q.dp_allocate(lin["alpha"], errors, costs, budget)
        greedy, greedy_pred = Q.greedy_allocate(lin["alpha"], errors, costs, budget)
        rand = [C.random_allocation(costs, budget, gen) for _ in range(q["random_allocations"])]
        metrics[f"alloc_dp_{tag}"] = measure(dp)
        metrics[f"alloc_dp_pred_{tag}"] = predict(dp)
        metrics[f"alloc_dp_bits_{tag}"] = avg_bits(dp)
        metrics[f"alloc_greedy_{tag}"] = measure(greedy)
        metrics[f"alloc_dp_pred_minus_greedy_pred_{tag}"] = predict(dp) - greedy_pred
        metrics[f"alloc_dp_over_budget_{tag}"] = avg_bits(dp) - budget_bits
        metrics[f"alloc_random_{tag}"] = float(np.mean([measure(c) for c in rand]))
        metrics[f"alloc_dp_relerr_{tag}"] = abs(metrics[f"alloc_dp_pred_{tag}"] - metrics[f"alloc_dp_{tag}"]) \
            / abs(metrics[f"alloc_dp_{tag}"])
        metrics[f"alloc_random_minus_dp_{tag}"] = metrics[f"alloc_random_{tag}"] - metrics[f"alloc_dp_{tag}"]
        metrics[f"alloc_greedy_minus_dp_{tag}"] = metrics[f"alloc_greedy_{tag}"] - metrics[f"alloc_dp_{tag}"]
        if float(budget_bits) in [float(b) for b in opts]:
            uni = [opts.index(int(budget_bits))] * len(weights)
            metrics[f"alloc_uniform_{tag}"] = measure(uni)
            metrics[f"alloc_uniform_minus_dp_{tag}"] = metrics[f"alloc_uniform_{tag}"] - metrics[f"alloc_dp_{tag}"]
        info[f"alloc_dp_{tag}"] = dict(zip(probe.names, [opts[j] for j in dp]))
        arrays[f"alloc_{tag}"] = np.array([metrics[f"alloc_{m}_{tag}"] for m in ("dp", "greedy", "random")] +
                                          [metrics.get(f"alloc_uniform_{tag}", np.nan), metrics[f"alloc_dp_pred_{tag}"]])
    arrays["alpha"] = alpha.numpy()
    metrics["evaluations"] = probe.evals
    tags = [str(b).replace(".", "p") for b in q["budgets"]]
    metrics["alloc_dp_pred_minus_greedy_pred_max"] = max(metrics[f"alloc_dp_pred_minus_greedy_pred_{t}"] for t in tags)
    metrics["alloc_dp_over_budget_max"] = max(metrics[f"alloc_dp_over_budget_{t}"] for t in tags)
    info.update(group=q["group"], bits=q["bits"], options=opts, budgets=q["budgets"], linearity=p["linearity"])
    write_metrics(run.args.metrics, metrics, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print({k: round(v, 5) if isinstance(v, float) else v for k, v in metrics.items()})


if __name__ == "__main__":
    torch.set_default_dtype(torch.float64)
    main()
