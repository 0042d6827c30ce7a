"""INR fitting: N INRs as one stacked model against the same N fitted one by one (same init, same steps).

Writes results/benchmarks/dwsnets.json: wall seconds of each, their ratio (the speedup of stacking), the largest
weight difference between the two after all steps, and after one step in float64. The summed loss gives each INR its
own gradient (equal to 1e-16 in float64), so the two differ only by the order of float reductions; but Adam divides
by sqrt(v) + eps, which multiplies the rounding of a gradient near eps (1e-8) by lr / eps, and the sine network
(w0 = 30) amplifies it further each step: after 100 steps the weights differ visibly while the fits are equally
good (the mean fit MSE of each is reported).
"""
import time

import torch

from shared.data.inr import fit_inrs, init_inrs, sine_targets
from shared.io.files import write_json
from shared.pipeline.run import start_run


def max_diff(stacked, single):
    """Largest |difference| of any weight or bias between the stacked fit and the one-by-one fits."""
    return max((torch.cat([s[part][m] for s in single]) - stacked[part][m]).abs().max().item()
               for part in (0, 1) for m in range(len(stacked[0])))


def main():
    run = start_run("out")
    p = run.params
    inr, n = p["inr"], p["n_inrs"]
    coords, targets, _ = sine_targets(n, p["sine"]["points"], run.seed(p["seed"], "benchmark"))
    widths = [1] + [inr["hidden"]] * inr["n_hidden_layers"] + [1]
    init = init_inrs(n, widths, inr["w0"], run.generator(p["seed"], "benchmark-init"))
    fit = lambda t, i, steps=p["steps"], dtype=torch.float32: fit_inrs(
        coords, t, inr["hidden"], inr["n_hidden_layers"], inr["w0"], steps, inr["lr"], device=run.device, init=i,
        dtype=dtype)
    one = lambda k: ([w[k:k + 1] for w in init[0]], [b[k:k + 1] for b in init[1]])
    start = time.perf_counter()
    stacked = fit(targets, init)
    t_stacked = time.perf_counter() - start
    start = time.perf_counter()
    single = [fit(targets[k:k + 1], one(k)) for k in range(n)]
    t_single = time.perf_counter() - start
    short = fit(targets, init, 1, torch.float64), [fit(targets[k:k + 1], one(k), 1, torch.float64) for k in range(n)]
    out = {"benchmark": "dwsnets: INR fitting, stacked vs one by one", "device": str(run.device),
           "threads": torch.get_num_threads(), "n_inrs": n, "steps": p["steps"], "widths": widths,
           "points": p["sine"]["points"], "stacked_s": round(t_stacked, 3), "one_by_one_s": round(t_single, 3),
           "speedup": round(t_single / t_stacked, 2), "max_weight_diff": max_diff(stacked, single),
           "max_weight_diff_1_step_float64": max_diff(*short),
           "mean_fit_mse_stacked": stacked[2].mean().item(),
           "mean_fit_mse_one_by_one": torch.cat([s[2] for s in single]).mean().item()}
    write_json(run.args.out, out)
    print(out)


if __name__ == "__main__":
    main()
