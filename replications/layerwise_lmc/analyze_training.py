"""The paper's Fig. 1 layout: midpoint barriers of the whole model and of every single layer group, both
directions, at every saved checkpoint of one pair (claims F4-F6). Arrays: (rows = full + layer groups) x epochs."""
import numpy as np

from shared.pipeline.run import load_models, start_run, write_metrics

from .common import DIRECTIONS, MEASURES, Evaluator, barrier_table, load_data, max_abs_single, states_at


def main():
    run = start_run("checkpoint", "data", "metrics", "arrays")
    p = run.params
    models, specs, meta = load_models(run.args.checkpoint)
    data = load_data(run.args.data, p["dataset"])
    ev = Evaluator(next(iter(models.values())), data, run.device, p["eval_train_max"], p["chunk"])
    epochs = sorted({s["epoch"] for s in specs.values()})
    tables = {}
    for epoch in epochs:
        a, b = states_at(models, specs, epoch)
        tables[epoch] = barrier_table(ev, a, b)
        print(f"epoch {epoch}: full {tables[epoch]['full']['train_loss']:.3f}, "
              f"max |single| {max_abs_single(tables[epoch]):.3f}", flush=True)
    groups = tables[epochs[0]]["groups"]
    late = [e for e in epochs if e >= p["late_epoch"]]
    m = {
        "full_barrier_init": tables[epochs[0]]["full"]["train_loss"] if epochs[0] == 0 else float("nan"),
        "full_barrier_min_late": min(tables[e]["full"]["train_loss"] for e in late),
        "full_barrier_max_late": max(tables[e]["full"]["train_loss"] for e in late),
        "single_absmax_late": max(max_abs_single(tables[e]) for e in late),
        "single_absmax_late_test": max(max_abs_single(tables[e], "test_loss") for e in late),
        "full_barrier_final_test": tables[epochs[-1]]["full"]["test_loss"],
        "full_barrier_final_err": tables[epochs[-1]]["full"]["test_err"],
    }
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
            "evaluations": ev.calls, "units": "loss in nats, error in percentage points"}
    write_metrics(run.args.metrics, m, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(m)


if __name__ == "__main__":
    main()
