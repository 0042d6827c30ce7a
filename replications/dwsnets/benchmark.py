"""INR fitting: N INRs as one stacked model against the same N fitted one by one (same init, same steps).

Writes results/benchmarks/dwsnets.json: wall seconds of each, their ratio (the speedup of stacking) and the largest
weight difference between the two (float rounding only: the summed loss gives each INR its own gradient).
"""
import time

import torch

from shared.data.inr import fit_inrs, init_inrs, sine_targets
from shared.io.files import write_json
from shared.pipeline.run import start_run


def main():
    run = start_run("out")
    p = run.params
    inr, n = p["inr"], p["n_inrs"]
    coords, targets, _ = sine_targets(n, p["sine"]["points"], run.seed(p["seed"], "benchmark"))
    widths = [1] + [inr["hidden"]] * inr["n_hidden_layers"] + [1]
    init = init_inrs(n, widths, inr["w0"], run.generator(p["seed"], "benchmark-init"))
    fit = lambda t, i: fit_inrs(coords, t, inr["hidden"], inr["n_hidden_layers"], inr["w0"], p["steps"],  # noqa: E731
                                inr["lr"], device=run.device, init=i)
    start = time.perf_counter()
    stacked = fit(targets, init)
    t_stacked = time.perf_counter() - start
    start = time.perf_counter()
    single = [fit(targets[k:k + 1], ([w[k:k + 1] for w in init[0]], [b[k:k + 1] for b in init[1]])) for k in range(n)]
    t_single = time.perf_counter() - start
    diff = max((torch.cat([s[0][m] for s in single]) - stacked[0][m]).abs().max().item()
               for m in range(len(widths) - 1))
    diff = max(diff, max((torch.cat([s[1][m] for s in single]) - stacked[1][m]).abs().max().item()
                         for m in range(len(widths) - 1)))
    out = {"benchmark": "dwsnets: INR fitting, stacked vs one by one", "device": str(run.device),
           "threads": torch.get_num_threads(), "n_inrs": n, "steps": p["steps"], "widths": widths,
           "points": p["sine"]["points"], "stacked_s": round(t_stacked, 3), "one_by_one_s": round(t_single, 3),
           "speedup": round(t_single / t_stacked, 2), "max_weight_diff": diff,
           "mean_fit_mse_stacked": stacked[2].mean().item()}
    write_json(run.args.out, out)
    print(out)


if __name__ == "__main__":
    main()
