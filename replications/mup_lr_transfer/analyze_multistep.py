"""Metrics of the t-step sweeps under muP: the argmin of the seed-mean loss over the eta grid at each width, and
the shift between the two largest widths in grid steps (M1 at any step, Sec. 4)."""
import numpy as np

from shared.pipeline.run import start_run, write_metrics

from .common import load_results


def main():
    run = start_run("multistep", "metrics", "arrays")
    p = run.params
    r, meta = load_results(run.args.multistep)
    ms = p["multistep"]
    widths = np.array(ms["widths"], float)
    order = np.argsort(widths)
    widths, grid = widths[order], r["grid"]
    losses = r["losses"][:, order]  # (steps, widths, seeds, grid)
    mean = losses.mean(axis=2)
    argmins = grid[np.argmin(mean, axis=-1)]  # (steps, widths)
    step = grid[1] - grid[0]
    t = ms["steps"].index(p["steps"])
    metrics = {"eta_inf": float(r["eta_inf"]), "grid_step": float(step),
               "argmin_shift_steps": float(abs(argmins[t, -1] - argmins[t, -2]) / step),
               "argmin_shift_steps_smallest_largest": float(abs(argmins[t, -1] - argmins[t, 0]) / step)}
    for i, tt in enumerate(ms["steps"]):
        for j, n in enumerate(widths.astype(int)):
            metrics[f"argmin_t{tt}_n{n}"] = float(argmins[i, j])
    arrays = {"widths": widths, "grid": grid, "mean_loss": mean, "losses": losses, "steps": np.array(ms["steps"]),
              "eta_inf": r["eta_inf"]}
    info = {"widths": widths.astype(int).tolist(), "seeds": len(ms["seeds"]), "steps": ms["steps"],
            "claim_steps": p["steps"]}
    write_metrics(run.args.metrics, metrics, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(metrics)


if __name__ == "__main__":
    main()
