"""MNIST heads (claims F2-F5, K3-K5, I1-I3): test accuracy per arm (gaps are means over seeds of per-seed
differences), the prototype read-out (each Tversky prototype and each linear row correlated, as an image, with every
class-mean training image; the same for the Tversky heads at their init, the control), the exact forward on the
trained weights against an independent einsum of the formula (float64), asymmetry, and the parameter counts."""
import statistics

import torch
import torch.nn.functional as F

from shared.io.runtime import seed_everything
from shared.pipeline.run import derive_seed, load_models, start_run, write_metrics
from shared.train.evaluate import accuracy

from .common import class_means, head_rows, image_arms, load_image_data, row_correlations
from .model import build, n_params


def formula(x, layer):
    """The contrast model (product, ignorematch, normalised inputs and prototypes) written out with einsum."""
    xa, pa = F.normalize(x, dim=-1), F.normalize(layer.prototypes, dim=-1)
    sx, sp = torch.einsum("nd,kd->nk", xa, layer.fbank), torch.einsum("pd,kd->pk", pa, layer.fbank)
    hx, hp = (sx > 0).double(), (sp > 0).double()
    ax, ap = sx * hx, sp * hp
    inter = torch.einsum("nk,pk->np", ax, ap)
    x_minus_p = torch.einsum("nk,pk->np", ax, 1 - hp)
    p_minus_x = torch.einsum("nk,pk->np", 1 - hx, ap)
    return layer.theta * inter - layer.alpha * x_minus_p - layer.beta * p_minus_x


def main():
    run = start_run("checkpoint", "history", "data", "metrics", "arrays")
    e, a = run.params["images"], run.params["analysis"]
    data = load_image_data(run.args.data)
    x, y = data["x_test"], data["y_test"]
    means = class_means(data["x_train"], data["y_train"], e["n_classes"]).double()
    models, specs, meta = load_models(run.args.checkpoint)
    acc = {name: accuracy(model, x, y) for name, model in models.items()}
    untrained, untrained_models = {}, {}
    for name, spec in specs.items():
        seed_everything(derive_seed(spec["seed"], "init"))
        untrained_models[name] = build(spec).eval()
        untrained[name] = accuracy(untrained_models[name], x, y)
    seeds, arms = e["seeds"], [arm for arm, *_ in image_arms(e)]

    def gap(first, second):
        return statistics.fmean(acc[f"{first}-seed{s}"] - acc[f"{second}-seed{s}"] for s in seeds)

    def readout(model):
        c = row_correlations(head_rows(model), means)
        return float(c.diagonal().mean()), float((c.argmax(1) == torch.arange(len(c))).double().mean())

    m = {f"acc_{arm}_mean": statistics.fmean(acc[f"{arm}-seed{s}"] for s in seeds) for arm in arms}
    m["tversky_minus_linear"] = gap("tversky", "linear")
    m["tversky_minus_mlp_matched"] = gap("tversky", "mlp_matched")
    m["untrained_minus_linear"] = statistics.fmean(untrained[f"tversky-seed{s}"] - acc[f"linear-seed{s}"]
                                                   for s in seeds)
    m["untrained_acc_max"] = max(untrained.values())
    params = {arm: specs[f"{arm}-seed{seeds[0]}"]["params"] for arm in arms}
    m["mlp_matched_params_ratio"] = params["mlp_matched"] / params["tversky"]
    m["param_count_mismatch"] = sum(abs(n_params(models[n]) - specs[n]["params"]) for n in models)
    ro = {arm: [readout(models[f"{arm}-seed{s}"]) for s in seeds] for arm in ("tversky", "linear")}
    ro["untrained"] = [readout(untrained_models[f"tversky-seed{s}"]) for s in seeds]
    for key, rows in ro.items():
        m[f"{key}_classmean_corr"] = statistics.fmean(c for c, _ in rows)
        m[f"{key}_identifies_class_min"] = min(i for _, i in rows)
        m[f"{key}_identifies_class_max"] = max(i for _, i in rows)
    m["tversky_minus_linear_corr"] = m["tversky_classmean_corr"] - m["linear_classmean_corr"]
    # identities on the trained weights, float64
    xi = x[:a["identity_inputs"]].double()
    errs, asym = [], []
    with torch.no_grad():
        for s in seeds:
            layer = models[f"tversky-seed{s}"].double()
            errs.append(float((layer(xi) - formula(xi, layer)).abs().max()))
            # S(x, pi) - S(pi, x) with the learned alpha, beta: swap the roles by swapping the weights
            swapped = build(specs[f"tversky-seed{s}"]).double()
            swapped.load_state_dict(layer.state_dict())
            swapped.alpha.copy_(layer.beta), swapped.beta.copy_(layer.alpha)
            asym.append(float((layer(xi) - swapped(xi)).abs().max()) if abs(float(layer.alpha - layer.beta)) > 0
                        else 0.0)
    m["forward_vs_formula_max_abs"] = max(errs)
    m["asymmetry_min"] = min(asym)
    tv = [models[f"tversky-seed{s}"] for s in seeds]
    m["alpha_mean"], m["beta_mean"], m["theta_mean"] = (statistics.fmean(float(getattr(t, k)) for t in tv)
                                                        for k in ("alpha", "beta", "theta"))
    first = models[f"tversky-seed{seeds[0]}"]
    side = int(round(e["d_input"] ** 0.5))
    arrays = {"prototypes": first.prototypes.detach().float().numpy().reshape(-1, side, side),
              "untrained": untrained_models[f"tversky-seed{seeds[0]}"].prototypes.detach().numpy().reshape(-1, side,
                                                                                                            side),
              "linear": models[f"linear-seed{seeds[0]}"].weight.detach().numpy().reshape(-1, side, side),
              "features": first.fbank.detach().float().numpy()[:16].reshape(-1, side, side),
              "means": means.float().numpy().reshape(-1, side, side)}
    info = {"seeds": seeds, "acc": acc, "untrained_acc": untrained, "params": params, "readout": ro}
    write_metrics(run.args.metrics, m, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(m)


if __name__ == "__main__":
    main()
