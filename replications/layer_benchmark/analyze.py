"""Metrics of the benchmark: per task, family and budget the seed mean and std of the test metric, the counts, the
chosen lr and the throughput relative to dense; the cross-paper comparisons the claims read, each with its untrained
control; the leaderboard (family x task at matched parameters) the README shows; the arrays of the figures.

A comparison reads seed means at one budget. Its control is the same difference with the layer under test replaced
by its untrained init (the mean of its seeds' init scores): the check must tell a trained layer from an untrained
one. For a claim that the layer under test is *worse* than dense, the control untrains dense instead.
"""
import itertools

import numpy as np

from shared.io.files import read_json
from shared.nn.layer_registry import families
from shared.pipeline.run import start_run, write_metrics

from .common import LOWER_IS_BETTER, METRIC, REFERENCE

BUDGETS = ("params", "macs")
GLUS = ("bilinear", "reglu", "swiglu")


def summarize(result):
    """{(family, budget): row} of one task: seed mean and std (ddof 1) of the test metric and of the init metric,
    counts, width, lr and speeds relative to the dense unit at the parameter budget."""
    units = result["units"]
    dense = next(u for u in units if u["family"] == REFERENCE and "params" in u["budgets"])
    rows = {}
    for u in units:
        test = np.array([s["test_metric"] for s in u["seeds"].values()])
        init = np.array([s["init_metric"] for s in u["seeds"].values()])
        row = {"mean": test.mean(), "std": test.std(ddof=1) if len(test) > 1 else 0.0, "init": init.mean(),
               "params": u["params"], "macs": u["macs"], "params_built": u["params_built"], "width": u["width"],
               "lr": u["lr"], "fwd_speed": dense["forward_s"] / u["forward_s"],
               "fwdbwd_speed": dense["fwdbwd_s"] / u["fwdbwd_s"],
               "fwdbwd_us": 1e6 * u["fwdbwd_s"] / result["timing"]["batch"]}
        for budget in u["budgets"]:
            rows[u["family"], budget] = row
    return rows


def comparisons(rows, roles):
    """The values the claims read, and their untrained controls: {key: value}. `roles` names the task of each
    role: image (MNIST-like, the GLU / B-cos / quadratic claims), structured (where every structured family's block
    can meet the budget within the width grid), lm."""
    tx = rows[roles["lm"]]
    out = {}
    # Shazeer 2020, Pearce et al. 2025: each GLU variant's LM loss minus ReLU dense's, at equal params (worst one)
    out["glu_minus_relu_lm_params"] = max(tx[g, "params"]["mean"] - tx[REFERENCE, "params"]["mean"] for g in GLUS)
    out["glu_minus_relu_lm_params_untrained"] = max(tx[g, "params"]["init"] - tx[REFERENCE, "params"]["mean"]
                                                    for g in GLUS)
    losses = {g: tx[g, "params"]["mean"] for g in GLUS}
    out["glu_spread_lm_params"] = max(abs(a - b) for a, b in itertools.combinations(losses.values(), 2))
    untrained = {**losses, "bilinear": tx["bilinear", "params"]["init"]}
    out["glu_spread_lm_params_untrained"] = max(abs(a - b) for a, b in itertools.combinations(untrained.values(), 2))
    for family, budget, role in (("btt", "macs", "structured"), ("monarch", "macs", "structured"),
                                 ("low_rank", "params", "structured"), ("kronecker", "macs", "structured"),
                                 ("bilinear", "params", "image"), ("bcos", "params", "image"),
                                 ("quadratic", "params", "image")):
        im, key = rows[roles[role]], f"{family}_minus_dense_{role}_{budget}"
        out[key] = im[family, budget]["mean"] - im[REFERENCE, budget]["mean"]
        if family in ("low_rank", "kronecker"):  # claimed worse than dense: the control untrains dense
            out[f"{key}_untrained"] = im[family, budget]["mean"] - im[REFERENCE, budget]["init"]
        else:
            out[f"{key}_untrained"] = im[family, budget]["init"] - im[REFERENCE, budget]["mean"]
    return out


def leaderboard(rows, kinds, names, seeds):
    """The README's table: family x task at matched parameters, seed mean ± std (accuracy in %). A family whose
    block could not meet the budget within the width grid (its count off by more than the grid's 1.5x step) is
    marked with its count over the budget."""
    tasks = list(rows)
    columns = ["Family", *[f"{t}: {METRIC[kinds[t]]}{' (%)' if kinds[t] == 'image' else ''}" for t in tasks]]
    body = []
    for family in names:
        cells = [f"`{family}`"]
        for t in tasks:
            r = rows[t].get((family, "params"))
            scale = 100 if kinds[t] == "image" else 1
            if r is None:
                cells.append("—")
                continue
            digits, ratio = 1 if scale == 100 else 3, r["params"] / rows[t][REFERENCE, "params"]["params"]
            off = "" if 1 / 1.5 <= ratio <= 1.5 else f" (×{ratio:.2g} params)"
            cells.append(f"{scale * r['mean']:.{digits}f} ± {scale * r['std']:.{digits}f}{off}")
        body.append(cells)
    note = (f"Test metric per task at equal block parameters, mean ± std over seeds {seeds} (each family's lr chosen "
            "on validation data from the same sweep); '(×r params)': the family's block could not meet the budget "
            "within the width grid.")
    return {"columns": columns, "rows": body, "note": note}


def training_meta(results):
    """One training record for the report from the tasks' jobs: their runs, summed wall time, merged code hashes,
    and the first job's provenance (the jobs share the commit and config)."""
    first = next(iter(results.values()))
    return {**first, "experiment": "benchmark", "runs": [run for r in results.values() for run in r["runs"]],
            "wall_seconds": sum(r["wall_seconds"] for r in results.values()),
            "code": {k: v for r in results.values() for k, v in r.get("code", {}).items()}}


def main():
    run = start_run("metrics", "arrays", many=("results",))
    p = run.params
    results = {r["task"]: r for r in map(read_json, run.args.results)}
    rows = {task: summarize(r) for task, r in results.items()}
    kinds = {task: r["kind"] for task, r in results.items()}
    names = list(dict.fromkeys(f for task_rows in rows.values() for f, _ in task_rows))

    metrics, arrays = {}, {}
    for task, task_rows in rows.items():
        for (family, budget), r in task_rows.items():
            for key in ("mean", "std", "init", "params", "macs", "width", "lr", "fwd_speed", "fwdbwd_speed"):
                metrics[f"{task}_{family}_{budget}_{key}"] = float(r[key])
        metrics[f"{task}_timing_other_load"] = results[task]["timing"]["other_load"]
        order = sorted(task_rows)
        arrays[f"{task}__family"] = np.array([f for f, _ in order])
        arrays[f"{task}__budget"] = np.array([b for _, b in order])
        for key in ("mean", "std", "params", "macs", "fwdbwd_us"):
            arrays[f"{task}__{key}"] = np.array([task_rows[k][key] for k in order], float)
        arrays[f"{task}__lower_is_better"] = np.array(LOWER_IS_BETTER[kinds[task]])
        arrays[f"{task}__metric"] = np.array(METRIC[kinds[task]])
    metrics.update(comparisons(rows, p["claims"]))
    metrics["params_count_error"] = max(abs(r["params_built"] - r["params"]) for t in rows.values()
                                        for r in t.values())
    registered = set(families())
    metrics["all_registered_benchmarked"] = all(registered - set(p["exclude"]) <= {f for f, _ in t}
                                                for t in rows.values())
    metrics["families_benchmarked"] = min(len({f for f, _ in t}) for t in rows.values())
    board = leaderboard(rows, kinds, names, p["seeds"])
    timing = {t: {k: r["timing"][k] for k in ("other_load", "wall_s", "threads", "batch", "repeats")}
              for t, r in results.items()}
    info = {"tasks": list(rows), "families": names, "seeds": p["seeds"], "excluded": p["exclude"],
            "leaderboard": board, "timing": timing, "machine": next(iter(results.values()))["timing"]["machine"],
            "lr": {t: {f"{f}/{b}": r["lr"] for (f, b), r in tr.items()} for t, tr in rows.items()},
            "lr_sweep": {t: {f"{u['family']}/w{u['width']}": u["lr_sweep"] for u in r["units"]}
                         for t, r in results.items()}}
    write_metrics(run.args.metrics, metrics, training_meta(results), info=info, arrays=arrays,
                  arrays_path=run.args.arrays)
    print(board)


if __name__ == "__main__":
    main()
