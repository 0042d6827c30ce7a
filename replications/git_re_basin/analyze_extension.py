"""Extension (ours, not in the paper): naive interpolation against weight matching for a bilinear MLP
(shared.nn.bilinear.Bilinear hidden layers, spec bilinear_mlp_spec) at one width: does the data-free matching
of Algorithm 1 also lower the barrier when the hidden units are products of two linear maps?"""
from shared.nn.interpolation import copy_state
from shared.pipeline.run import load_models, start_run, write_metrics

from .common import SPLITS, curves, lambdas, load_data, match, pair, ratio, summarise


def main():
    run = start_run("checkpoint", "data", "metrics", "arrays")
    p = run.params
    data = load_data(run.args.data)
    lams = lambdas(p["lambdas"])
    models, specs, meta = load_models(run.args.checkpoint)
    a, b = pair(models, specs, p["width"], kind="bilinear")
    spec, state_a, state_b = a.spec(), copy_state(a), copy_state(b)
    m, arrays = {}, {"lambdas": lams.numpy()}
    for method in ("naive", "wm"):
        matched, info = match(method, a, spec, state_a, state_b, data, p)
        curve = curves(a, state_a, matched, lams, data)
        m.update(summarise(curve, lams, method))
        arrays.update({f"{method}_{k}": v for k, v in curve.items()})
        if method == "wm":
            m["wm_sweeps"] = info["sweeps"]
    for split in SPLITS:
        m[f"wm_over_naive_{split}"] = ratio(m[f"wm_{split}_barrier"], m[f"naive_{split}_barrier"])
    write_metrics(run.args.metrics, m, meta, info={"width": p["width"], "kind": "bilinear"}, arrays=arrays,
                  arrays_path=run.args.arrays)
    print(m)


if __name__ == "__main__":
    main()
