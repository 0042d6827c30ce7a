"""Single-layer vs whole-model midpoint barriers (dossier 2.1) of every pair at its final epoch: the depth sweep
(claims F1-F3), the shared-init control (K2) and the bilinear extension (X1). Loss and error, train and test, both
directions. Arrays: the heat map over layer rows (full model, then hidden.0 .. hidden.<D-1>, out) x depth.

Several seed pairs: each metric is the mean over pairs, or the worst pair for a metric that is already the worst
case (WORST); the arrays draw the first pair.

Diagnostic added after the first run (no claim reads it; deviations.md says why): the same table after B's hidden
units are permuted onto A's by weight matching (Git Re-Basin, shared.nn.permutation), which puts two different-init
nets into one hidden basis, as a shared init does. Metrics `aligned_*`."""
import math
from itertools import pairwise

import numpy as np

from shared.nn.permutation import apply_permutation, mlp_spec, weight_matching
from shared.pipeline.run import load_models, start_run, write_metrics

from .common import (
    DIRECTIONS,
    MEASURES,
    Evaluator,
    barrier_table,
    load_data,
    max_single,
    over_pairs,
    pairs_of,
    ratio,
    states_at,
)

# metrics that are already the worst case over depths or layers: the worst seed pair (the rest: the mean over pairs)
WORST = {"full_barrier_min": min, "ratio_drop_min": min, "ratio_deepest": max}


def pair_metrics(tables, aligned, p):
    """The metrics of one seed pair from its barrier tables ({experiment: table}) and the aligned depth sweep."""
    m = {}
    ratios = []
    for name in p["depth_sweep"]:
        t = tables[name]
        d = len(t["groups"]) - 1
        for measure in MEASURES:
            m[f"full_{measure}_d{d}"] = t["full"][measure]
            m[f"max_single_{measure}_d{d}"] = max_single(t, measure)
        m[f"ratio_d{d}"] = ratio(max_single(t), t["full"]["train_loss"])
        m[f"ratio_test_d{d}"] = ratio(max_single(t, "test_loss"), t["full"]["test_loss"])
        m[f"ratio_err_d{d}"] = ratio(max_single(t, "train_err"), t["full"]["train_err"])
        m[f"endpoint_train_loss_d{d}"] = t["ref"]["train_loss"]
        m[f"endpoint_test_err_d{d}"] = t["ref"]["test_err"]
        ratios.append(m[f"ratio_d{d}"])
        al = aligned[name]
        m[f"aligned_full_d{d}"] = al["full"]["train_loss"]
        m[f"aligned_max_single_d{d}"] = max_single(al)
        m[f"aligned_ratio_d{d}"] = ratio(max_single(al), al["full"]["train_loss"])
    m["full_barrier_min"] = min(tables[n]["full"]["train_loss"] for n in p["depth_sweep"])
    drops = [r0 - r1 for r0, r1 in pairwise(ratios)]
    m["ratio_drop_min"] = float("nan") if any(math.isnan(d) for d in drops) else min(drops)  # NaN: a pair had no barrier
    m["ratio_deepest"] = ratios[-1]
    sh, bl = tables[p["shared_init"]], tables[p["bilinear"]]
    m["shared_full_barrier"] = sh["full"]["train_loss"]
    m["shared_max_single"] = max_single(sh)
    m["shared_full_test_err"] = sh["full"]["test_err"]
    m["bilinear_full_barrier"] = bl["full"]["train_loss"]
    m["bilinear_max_single"] = max_single(bl)
    m["bilinear_ratio"] = ratio(max_single(bl), bl["full"]["train_loss"])
    m["bilinear_full_test_err"] = bl["full"]["test_err"]
    return m


def main():
    run = start_run("data", "metrics", "arrays", many=("checkpoints",))
    p = run.params
    data = None
    tables, aligned, meta0 = {}, {}, None  # {pair: {experiment: barrier table}}
    for path in run.args.checkpoints:
        models, specs, meta = load_models(path)
        meta0 = meta0 or meta
        if data is None:
            data = load_data(run.args.data, p["dataset"])
        name = meta["experiment"]
        ev = Evaluator(next(iter(models.values())), data, run.device, p["eval_train_max"], p["chunk"])
        for pair in pairs_of(specs):
            a, b = states_at(models, specs, pair=pair)
            t = tables.setdefault(pair, {})[name] = barrier_table(ev, a, b)
            if name in p["depth_sweep"]:
                spec = mlp_spec([g for g in t["groups"]])
                perm, sweeps = weight_matching(spec, a, b, seed=0)
                al = aligned.setdefault(pair, {})[name] = barrier_table(ev, a, apply_permutation(spec, perm, b))
                print(f"  pair {pair} aligned ({sweeps} sweeps): full {al['full']['train_loss']:.3f}, "
                      f"max single {max_single(al):.3f}", flush=True)
            print(f"{name} pair {pair}: ends {t['ends']}, full {t['full']['train_loss']:.3f}, "
                  f"max single {max_single(t):.3f}", flush=True)

    pairs = sorted(tables)
    per_pair = [pair_metrics(tables[k], aligned[k], p) for k in pairs]
    m = over_pairs(per_pair, WORST)
    info = {"measures": list(MEASURES), "units": "loss in nats, error in percentage points", "figures_pair": pairs[0],
            "per_pair": {str(k): {key: pm[key] for key in (*WORST, "shared_full_barrier", "bilinear_full_barrier")}
                         for k, pm in zip(pairs, per_pair)}}
    sweep = p["depth_sweep"]
    tables, aligned = tables[pairs[0]], aligned[pairs[0]]  # the figures draw the first pair
    depths = [len(tables[name]["groups"]) - 1 for name in sweep]
    sh, bl = tables[p["shared_init"]], tables[p["bilinear"]]

    # heat map: rows full, hidden.0 .. hidden.<Dmax-1>, out; one column per depth-sweep pair
    rows = ["full"] + [f"hidden.{i}" for i in range(max(depths))] + ["out"]
    arrays = {"rows": np.array(rows), "depths": np.array(depths)}
    for measure in ("train_loss", "test_loss", "train_err", "test_err"):
        for direction in DIRECTIONS:
            grid = np.full((len(rows), len(sweep)), np.nan)
            for j, name in enumerate(sweep):
                t = tables[name]
                grid[0, j] = t["full"][measure]
                for g in t["groups"]:
                    grid[rows.index(g), j] = t["layer"][(g, direction)][measure]
            arrays[f"{measure}_{direction}"] = grid
            if measure == "train_loss":
                grid = np.full((len(rows), len(sweep)), np.nan)
                for j, name in enumerate(sweep):
                    t = aligned[name]
                    grid[0, j] = t["full"][measure]
                    for g in t["groups"]:
                        grid[rows.index(g), j] = t["layer"][(g, direction)][measure]
                arrays[f"aligned_{measure}_{direction}"] = grid
    for label, t in (("shared", sh), ("bilinear", bl)):
        arrays[f"{label}_groups"] = np.array(["full"] + t["groups"])
        for direction in DIRECTIONS:
            arrays[f"{label}_train_loss_{direction}"] = np.array(
                [t["full"]["train_loss"]] + [t["layer"][(g, direction)]["train_loss"] for g in t["groups"]])
    info["pairs"] = {n: {"groups": t["groups"], "endpoints": t["ends"]} for n, t in tables.items()}
    write_metrics(run.args.metrics, m, meta0, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print({k: round(v, 4) for k, v in m.items() if not k.startswith(("full_t", "max_single_t"))})


if __name__ == "__main__":
    main()
