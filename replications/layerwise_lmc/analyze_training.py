"""The paper's Fig. 1 layout: midpoint barriers of the whole model and of every single layer group, both
directions, at every saved checkpoint of one pair (claims F4-F6). Arrays: (rows = full + layer groups) x epochs.
Several seed pairs: each metric is the mean over pairs, or the worst pair for a metric that is already the worst case
over checkpoints (WORST); the arrays draw the first pair."""
import numpy as np

from shared.pipeline.run import load_models, start_run, write_metrics

from .common import (
    DIRECTIONS,
    MEASURES,
    Evaluator,
    barrier_table,
    load_data,
    max_abs_single,
    over_pairs,
    pairs_of,
    states_at,
)

# already the worst case over the late checkpoints (and layers): the worst seed pair; the rest is the mean over pairs
WORST = {"full_barrier_min_late": min, "full_barrier_max_late": max, "single_absmax_late": max,
         "single_absmax_late_test": max}


def pair_metrics(tables, epochs, late):
    """The metrics of one seed pair from its barrier tables ({epoch: table})."""
    return {
        "full_barrier_init": tables[epochs[0]]["full"]["train_loss"] if epochs[0] == 0 else float("nan"),
        "full_barrier_min_late": min(tables[e]["full"]["train_loss"] for e in late),
        "full_barrier_max_late": max(tables[e]["full"]["train_loss"] for e in late),
        "single_absmax_late": max(max_abs_single(tables[e]) for e in late),
        "single_absmax_late_test": max(max_abs_single(tables[e], "test_loss") for e in late),
        "full_barrier_final_test": tables[epochs[-1]]["full"]["test_loss"],
        "full_barrier_final_err": tables[epochs[-1]]["full"]["test_err"],
    }


def main():
    run = start_run("checkpoint", "data", "metrics", "arrays")
    p = run.params
    models, specs, meta = load_models(run.args.checkpoint)
    data = load_data(run.args.data, p["dataset"])
    ev = Evaluator(next(iter(models.values())), data, run.device, p["eval_train_max"], p["chunk"])
    epochs = sorted({s["epoch"] for s in specs.values()})
    late = [e for e in epochs if e >= p["late_epoch"]]
    pairs, per_pair, tables = pairs_of(specs), [], None
    for pair in pairs:
        mine = {}
        for epoch in epochs:
            a, b = states_at(models, specs, epoch, pair)
            mine[epoch] = barrier_table(ev, a, b)
            print(f"pair {pair} epoch {epoch}: full {mine[epoch]['full']['train_loss']:.3f}, "
                  f"max |single| {max_abs_single(mine[epoch]):.3f}", flush=True)
        per_pair.append(pair_metrics(mine, epochs, late))
        tables = tables or mine  # the figures draw the first pair
    m = over_pairs(per_pair, WORST)
    groups = tables[epochs[0]]["groups"]
    rows = ["full"] + groups
    arrays = {"rows": np.array(rows), "epochs": np.array(epochs)}
    for measure in MEASURES:
        for direction in DIRECTIONS:
            grid = np.zeros((len(rows), len(epochs)))
            for j, e in enumerate(epochs):
                grid[0, j] = tables[e]["full"][measure]
                for i, g in enumerate(groups, 1):
                    grid[i, j] = tables[e]["layer"][(g, direction)][measure]
            arrays[f"{measure}_{direction}"] = grid
    info = {"experiment": meta["experiment"], "epochs": epochs, "late_epochs": late, "groups": groups,
            "evaluations": ev.calls, "units": "loss in nats, error in percentage points", "figures_pair": pairs[0],
            "per_pair": {str(k): pm for k, pm in zip(pairs, per_pair)}}
    write_metrics(run.args.metrics, m, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(m)


if __name__ == "__main__":
    main()
