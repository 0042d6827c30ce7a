"""Loss against compute per structure and arm: the fitted scaling exponents (shared.stats.linear_fit of log final
train loss and of log test error against log hidden-layer MACs; exponent = -slope), the structures at the largest
matched compute (each family's width whose hidden MACs are closest in log to the widest dense model's), the
naive-lr penalty at the widest BTT and Kronecker widths, and monotonicity in width. Several seeds: every metric is
computed on the curves of the mean over seeds (each width's final train loss and test error averaged first), but
the count of rising width steps, a worst case over structures, which reads the worst seed."""
import math
from itertools import pairwise

import numpy as np

from shared.io.files import read_json
from shared.pipeline.run import start_run, write_metrics
from shared.stats import linear_fit

STRUCTURED = ("btt", "monarch", "kronecker", "low_rank")
MEANS = ("train_loss", "test_error", "test_loss", "final_train_error")  # averaged over seeds; the rest is per width


def curve(runs, structure, seed=None):
    """One row per width of a structure, its losses and errors the mean over the seeds it was trained at (or over
    `seed` alone)."""
    by_width = {}
    for r in runs.values():
        if r["structure"] == structure and seed in (None, r["seed"]):
            by_width.setdefault(r["width"], []).append(r)
    return [{**rows[0], **{k: float(np.mean([r[k] for r in rows])) for k in MEANS}, "seeds": len(rows)}
            for _, rows in sorted(by_width.items())]


def exponent(rows, key):
    fit = linear_fit([math.log(r["hidden_macs"]) for r in rows], [math.log(max(r[key], 1e-12)) for r in rows])
    return {"exponent": -fit["slope"], "stderr": fit["slope_stderr"], "r2": fit["r2"], "n": fit["n"]}


def main():
    run = start_run("aware", "naive", "tune", "metrics", "arrays")
    aware, naive, tune = read_json(run.args.aware), read_json(run.args.naive), read_json(run.args.tune)
    curves = {s: curve(aware["runs"], s) for s in ("dense", *STRUCTURED)}
    naive_curves = {s: curve(naive["runs"], s) for s in STRUCTURED}
    metrics, info = {}, {"base_lr": tune["lr"], "lr_grid_losses": tune["losses"], "exponents": {}}

    # Monotone in width (aware arm): the number of width steps at which the final train loss rises, at the worst
    # seed (the claim reads the worst structure, so it reads the worst seed too, not the curve of the mean).
    seeds = sorted({r["seed"] for r in aware["runs"].values()})
    rises = lambda rows: int(sum(b["train_loss"] > a["train_loss"] for a, b in pairwise(rows)))
    violations = {s: max(rises(curve(aware["runs"], s, seed)) for seed in seeds) for s in curves}
    info["monotone_violations"] = violations
    metrics["aware_monotone_violations_max"] = max(violations.values())

    # The naive (dense-multiplier) lr against the structure-aware one at each structure's widest width.
    for s in ("btt", "kronecker"):
        a, n = curves[s][-1], naive_curves[s][-1]
        metrics[f"naive_penalty_{s}"] = n["train_loss"] / a["train_loss"] - 1
    info["naive_penalty_all"] = {s: [n["train_loss"] / a["train_loss"] - 1 for a, n in zip(curves[s], naive_curves[s])]
                                 for s in STRUCTURED}

    # Largest matched compute: each structured family's run nearest (in log MACs) to the widest dense model.
    dense_top = curves["dense"][-1]
    target = dense_top["hidden_macs"]
    matched = {s: min(curves[s], key=lambda r: abs(math.log(r["hidden_macs"] / target))) for s in STRUCTURED}
    info["matched"] = {s: {"width": r["width"], "hidden_macs": r["hidden_macs"], "train_loss": r["train_loss"],
                           "test_error": r["test_error"]} for s, r in matched.items()}
    info["matched"]["dense"] = {"width": dense_top["width"], "hidden_macs": target,
                                "train_loss": dense_top["train_loss"], "test_error": dense_top["test_error"]}
    metrics["btt_over_dense_loss"] = matched["btt"]["train_loss"] / dense_top["train_loss"]
    metrics["monarch_over_dense_loss"] = matched["monarch"]["train_loss"] / dense_top["train_loss"]
    metrics["btt_minus_dense_test_error"] = matched["btt"]["test_error"] - dense_top["test_error"]
    others = [matched[s]["train_loss"] for s in STRUCTURED if s != "low_rank"]
    metrics["low_rank_worst_structured"] = bool(matched["low_rank"]["train_loss"] >= max(others))

    # Scaling exponents, aware arm (and naive for reference).
    for s, rows in curves.items():
        info["exponents"][s] = {"train_loss": exponent(rows, "train_loss"), "test_error": exponent(rows, "test_error")}
    for s, rows in naive_curves.items():
        info["exponents"][f"naive_{s}"] = {"train_loss": exponent(rows, "train_loss")}
    e = info["exponents"]
    metrics["btt_minus_dense_exponent"] = e["btt"]["train_loss"]["exponent"] - e["dense"]["train_loss"]["exponent"]
    # the difference in units of its combined standard error: an ordering inside the fits' noise is not shown
    se = (e["btt"]["train_loss"]["stderr"] ** 2 + e["dense"]["train_loss"]["stderr"] ** 2) ** 0.5
    metrics["btt_minus_dense_exponent_z"] = metrics["btt_minus_dense_exponent"] / se
    for s in ("dense", *STRUCTURED):
        metrics[f"exponent_{s}"] = e[s]["train_loss"]["exponent"]
        metrics[f"exponent_{s}_stderr"] = e[s]["train_loss"]["stderr"]

    arrays = {}
    for arm, table in (("aware", curves), ("naive", naive_curves)):
        for s, rows in table.items():
            arrays[f"{arm}/{s}/macs"] = np.array([r["hidden_macs"] for r in rows], float)
            arrays[f"{arm}/{s}/loss"] = np.array([r["train_loss"] for r in rows], float)
            arrays[f"{arm}/{s}/test_error"] = np.array([r["test_error"] for r in rows], float)
    write_metrics(run.args.metrics, metrics, meta=aware["meta"], info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(metrics)


if __name__ == "__main__":
    main()
