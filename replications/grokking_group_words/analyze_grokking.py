"""Q3 and the memorise / generalise boundary, from the `grok` sweep (training fractions x seeds).

Per member: the first step with training accuracy 1 and the first with test accuracy >= success_acc (grokking
delay = their ratio); the success rate per training fraction and its 0.5 crossing (the boundary; its spread by
a bootstrap over seeds); the slope of log(steps to generalise) against the training fraction (shared.stats
.linear_fit, with its standard error); the isotypic alignment of the generalised members' hidden units.
"""
import math

import numpy as np
import torch

from shared.data.groups import real_components
from shared.io.files import read_json
from shared.nn.group_analysis import unit_alignment
from shared.pipeline.run import load_models, start_run, write_metrics
from shared.stats import crossing, linear_fit
from shared.train.full_batch import first_step_reaching

from .common import task


def alignment_share(state, comps, purity, live_norm):
    """Share of live units (norm >= live_norm x the largest) whose input energy is >= purity in one non-trivial
    component and whose u, v and out all peak there."""
    al = unit_alignment(state, comps)
    live = al["norm"] >= live_norm * al["norm"].max()
    aligned = (al["purity"] >= purity) & al["same_component"]
    return float(aligned[live].mean()), int(live.sum())


def main():
    run = start_run("checkpoint", "history", "metrics", "arrays")
    p = run.params
    models, specs, meta = load_models(run.args.checkpoint)
    model, spec = models["grok"], specs["grok"]
    h = read_json(run.args.history)["history"]["grok"]
    steps = torch.tensor(h["step"])
    train_acc, test_acc = torch.tensor(h["train_acc"]), torch.tensor(h["test_acc"])
    fractions = np.array(spec["fractions"], float)
    grid = np.array(sorted(set(spec["fractions"])))
    group, a, b, labels = task(spec["group"], spec["word"])

    t_train = first_step_reaching(steps, train_acc, 1.0).numpy()
    t_test = first_step_reaching(steps, test_acc, p["success_acc"]).numpy()
    final_test = test_acc[-1].numpy()
    success = final_test >= p["success_acc"]
    main = np.isclose(fractions, p["main_fraction"])
    ratio = t_test[main] / np.maximum(t_train[main], 1)
    ratio = ratio[np.isfinite(ratio)]

    rate = np.array([success[np.isclose(fractions, f)].mean() for f in grid])
    boundary = crossing(grid, rate, 0.5)
    rng = np.random.default_rng(0)  # bootstrap over seeds, within each fraction
    boot = []
    for _ in range(400):
        r = [rng.choice(success[np.isclose(fractions, f)], size=int(np.isclose(fractions, f).sum())).mean() for f in grid]
        boot.append(crossing(grid, r, 0.5))
    boot = np.array(boot)
    boundary_sd = float(np.nanstd(boot)) if np.isfinite(boot).sum() > 1 else float("nan")

    above = np.nonzero(rate >= 0.5)[0]  # the grid interval the crossing lies in (the bootstrap cannot resolve below it)
    bracket = (grid[above[0] - 1], grid[above[0]]) if len(above) and above[0] > 0 else (math.nan, math.nan)

    gen = np.isfinite(t_test) & (t_test > 0)
    fit = linear_fit(fractions[gen], np.log(t_test[gen])) if gen.sum() >= 3 and len(set(fractions[gen])) > 1 else None

    comps = real_components(group)
    shares, lives = [], []
    for i in np.nonzero(success & main)[0]:
        s, n_live = alignment_share(model.member_state(int(i)), comps, p["purity"], p["live_norm"])
        shares.append(s)
        lives.append(n_live)

    low = np.isclose(fractions, grid[0])
    metrics = {
        "delay_ratio_main": float(np.median(ratio)) if len(ratio) else float("nan"),
        "generalised_share_main": float(success[main].mean()),
        "final_test_acc_main_median": float(np.median(final_test[main])),
        "final_test_acc_max_fraction_min": float(final_test[np.isclose(fractions, grid[-1])].min()),
        "train_acc_all_min": float(train_acc[-1].min()),
        "lowest_fraction_test_acc_max": float(final_test[low].max()),
        "boundary_fraction": boundary,
        "boundary_fraction_sd": boundary_sd,
        "boundary_bracket_low": float(bracket[0]),
        "boundary_bracket_high": float(bracket[1]),
        "log_steps_vs_fraction_slope": fit["slope"] if fit else float("nan"),
        "log_steps_vs_fraction_slope_stderr": fit["slope_stderr"] if fit else float("nan"),
        "log_steps_vs_fraction_slope_upper": fit["slope"] + 2 * fit["slope_stderr"] if fit else float("nan"),
        "aligned_unit_share": float(np.mean(shares)) if shares else float("nan"),
        "live_units_median": float(np.median(lives)) if lives else float("nan"),
        "chance": 1.0 / group.order,
    }
    main_idx = np.nonzero(main)[0]
    arrays = {"step": steps.numpy().astype(float), "fractions": grid, "success_rate": rate,
              "member_fraction": fractions, "t_train": t_train, "t_test": t_test, "final_test": final_test,
              "main_train_acc": train_acc[:, main_idx].numpy(), "main_test_acc": test_acc[:, main_idx].numpy(),
              "boundary": np.array([boundary, boundary_sd]),
              "fit": np.array([fit["slope"], fit["intercept"], fit["slope_stderr"]] if fit else [math.nan] * 3)}
    info = {"group": spec["group"], "word": spec["word"], "width": spec["width"], "activation": spec["activation"],
            "fit": fit, "success_rate": dict(zip(map(str, grid), rate.tolist())), "bootstrap": 400}
    write_metrics(run.args.metrics, metrics, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(metrics)


if __name__ == "__main__":
    main()
