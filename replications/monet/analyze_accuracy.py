"""Test accuracy of every trained model, the paired gaps the findings read, and two controls: the same models
untrained (rebuilt from their init seeds) and how closely the compared models match the MONet's parameters.

A gap is the mean over seeds of the per-seed difference (models of one seed saw the same batches)."""
import statistics

import numpy as np

from shared.io.files import read_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import derive_seed, load_models, start_run, write_metrics
from shared.train.supervised import evaluate

from .common import GROUPS, load_data
from .model import build, n_params


def main():
    run = start_run(*(f"{g}_{k}" for g in GROUPS for k in ("checkpoint", "history")), "data", "metrics", "arrays")
    args = run.args
    data = {k: v.to(run.device) for k, v in load_data(args.data).items()}  # 10,000 CIFAR images x 30 models: GPU
    acc, params, untrained, curves, meta = {}, {}, [], {}, None
    for group in GROUPS:
        models, specs, meta = load_models(getattr(args, f"{group}_checkpoint"))
        for name, model in models.items():
            spec = specs[name]
            acc[(group, spec["kind"], spec["seed"])] = evaluate(model.to(run.device), data["x_test"], data["y_test"])[1]
            params[(group, spec["kind"])] = n_params(model)
            if spec["kind"] == "mu":  # the same model untrained: its init is fixed by the seed and kind
                seed_everything(derive_seed(spec["seed"], f"init/{spec['kind']}"))
                untrained.append(evaluate(build(spec).to(run.device), data["x_test"], data["y_test"])[1])
        history = read_json(getattr(args, f"{group}_history"))["history"]
        curves.update({f"{group}_{name}": np.array([row["test_acc"] for row in h]) for name, h in history.items()})

    seeds = sorted({s for *_, s in acc})
    m = {}
    for group, kind in sorted({(g, k) for g, k, _ in acc}):
        values = [acc[(group, kind, s)] for s in seeds]
        m[f"{group}_{kind}_acc_mean"], m[f"{group}_{kind}_acc_min"] = statistics.fmean(values), min(values)
        m[f"{group}_{kind}_params"] = params[(group, kind)]

    def gap(a, b):  # mean over seeds of acc[a] - acc[b]
        return statistics.fmean(acc[(*a, s)] - acc[(*b, s)] for s in seeds)

    m["flat_relu_minus_mu"] = gap(("flat", "relu"), ("flat", "mu"))
    m["flat_relu_minus_linear"] = gap(("flat", "relu"), ("flat", "linear"))  # K6, the control of F2
    m["flat_shortcut_gain"] = gap(("flat", "mu"), ("flat", "mu_noshortcut"))
    m["monet_minus_flat_polynomial"] = statistics.fmean(
        acc[("monet", "mu", s)] - max(acc[("flat", "mu", s)], acc[("flat", "bilinear", s)]) for s in seeds)
    m["monet_product_gain"] = gap(("monet", "mu"), ("monet", "linear"))
    m["monet_shift_gain"] = gap(("monet", "mu"), ("monet", "noshift"))
    m["monet_gelu_minus_mu"] = gap(("monet", "gelu"), ("monet", "mu"))
    m["monet_gelu_minus_linear"] = gap(("monet", "gelu"), ("monet", "linear"))  # K7, the control of F6
    m["monet_mu_minus_nonorm"] = gap(("monet", "mu"), ("monet", "nonorm"))
    m["untrained_acc_max"] = max(untrained)
    budget = params[("monet", "mu")]
    matched = [("flat", "relu"), ("flat", "bilinear"), ("flat", "mu"), ("monet", "gelu")]
    m["param_mismatch_max"] = max(abs(params[k] / budget - 1) for k in matched)

    names = sorted(acc, key=lambda k: (k[0], k[1], k[2]))
    arrays = {"labels": np.array([f"{g} {k}" for g, k, _ in names]), "acc": np.array([acc[k] for k in names]),
              **{f"curve_{k}": v for k, v in curves.items()}}
    info = {"seeds": seeds, "budget_params": budget, "test_images": len(data["x_test"])}
    write_metrics(args.metrics, m, meta, info=info, arrays=arrays, arrays_path=args.arrays)
    print(m)


if __name__ == "__main__":
    main()
