"""Sine-frequency regression: the learning curve (test MSE against training INRs) of every model kind, and the
orderings the paper's figure shows (DWSNet lowest at every size). MSE is in units of the frequency b; the constant
predictor's MSE is Var U(low, high) = (high - low)^2 / 12."""
import numpy as np

from shared.io.files import read_json
from shared.pipeline.run import start_run, write_metrics

PAPER_BASELINES = ("mlp", "mlp_aug")


def main():
    run = start_run("metrics", "arrays", many=("histories",))
    kinds = run.params["kinds"]
    low, high = run.params["freq"]
    curves, meta = {}, None
    for path, kind in zip(run.args.histories, kinds):
        doc = read_json(path)
        meta = meta or doc
        rows = sorted(doc["history"].values(), key=lambda r: r["n_train"])
        curves[kind] = {r["n_train"]: r["test"] for r in rows}
    sizes = sorted(curves["dws"])
    mse = {k: np.array([curves[k][n] for n in sizes]) for k in kinds}
    ratio = lambda k: float(np.max(mse["dws"] / mse[k]))
    variance = (high - low) ** 2 / 12
    metrics = {f"mse_{k}_n{n}": curves[k][n] for k in kinds for n in sizes}
    metrics.update({
        # against the paper's baselines that run here (the statistics baseline is ours: its own metric)
        "dws_lowest_at_every_n": bool(all(mse["dws"][i] < min(mse[k][i] for k in kinds if k in PAPER_BASELINES)
                                          for i in range(len(sizes)))),
        **{f"dws_over_{k}_max": ratio(k) for k in kinds if k != "dws"},
        "dws_curve_ratio": float(mse["dws"][-1] / mse["dws"][0]),
        "mlp_curve_ratio": float(mse["mlp"][-1] / mse["mlp"][0]),
        "dws_mse_largest_n": float(mse["dws"][-1]),
        "dws_mse_over_variance": float(mse["dws"][-1] / variance),
    })
    if "mlp_align" in kinds:
        metrics["mlp_align_over_mlp_largest_n"] = float(mse["mlp_align"][-1] / mse["mlp"][-1])
    if "mlp_aug" in kinds:
        metrics["mlp_aug_over_mlp_largest_n"] = float(mse["mlp_aug"][-1] / mse["mlp"][-1])
    info = {"sizes": sizes, "constant_predictor_mse": variance, "kinds": kinds}
    arrays = {"n_train": np.array(sizes, dtype=float), **{f"mse_{k}": v for k, v in mse.items()}}
    write_metrics(run.args.metrics, metrics, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(metrics)


if __name__ == "__main__":
    main()
