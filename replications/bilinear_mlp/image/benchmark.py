"""Training speed, measured in one run on this machine (reports/benchmarks.json; not part of the default run).

matmul_fraction = achieved FLOP/s of the full-tier training step (d_hidden 512, batch 2048) / the best fp32
matmul FLOP/s measured here on the step's own shapes and a large square one.
grid_speedup = time to train the Fig 5 grid (widths 30, 50, 100 x 5 seeds, batch 2048) one model after another /
time to train it as one batched run, with the per-model results compared.
"""
import json
import time

import torch

from shared.io.files import write_json
from shared.io.runtime import describe, seed_everything
from shared.pipeline.benchmarking import matmul_peak, synchronizer
from shared.pipeline.run import start_run
from shared.train.supervised import EpochSchedule, Run, train

from ..model import ImageClassifier

EPOCHS, REPEATS = 3, 2  # epochs per timed training, interleaved repeats of the grid comparison


def step_flops(d_in, d, n_classes, batch):
    """Forward + backward FLOPs of one step; the input needs no gradient, so the embedding costs 4 (not 6) per MAC."""
    return batch * (4 * d_in * d + 6 * d * 2 * d + 6 * d * n_classes)


def synthetic_data(n, d_in, seed=0):
    g = torch.Generator().manual_seed(seed)
    return {"x_train": torch.rand(n, d_in, generator=g), "y_train": torch.randint(0, 10, (n,), generator=g),
            "x_test": torch.rand(2048, d_in, generator=g), "y_test": torch.randint(0, 10, (2048,), generator=g)}


def build_models(specs):
    models = {}
    for name, d, seed in specs:
        seed_everything(seed)
        models[name] = ImageClassifier(d_hidden=d)
    return models


def main():
    run = start_run("out")  # params: {"device"}
    args, device = run.args, run.device
    sync = synchronizer(device)
    batch, steps = 2048, 8
    data = synthetic_data(batch * steps, 784)

    peak, rates = matmul_peak(device, sync, [(batch, 784, 512), (batch, 512, 1024), (2048, 2048, 2048)])
    models = build_models([("d512", 512, 0)])
    hist = train(models, [Run("d512", 0, 0.5, 1.0)], data, EpochSchedule(EPOCHS, batch, progress=False), device)
    step_s = min(h["epoch_seconds"] for h in hist["d512"]) / steps
    achieved = step_flops(784, 512, 10, batch) / step_s

    grid = [(f"d{d}_s{s}", d, s) for d in (30, 50, 100) for s in range(5)]
    runs = [Run(name, s, 0.4, 1.0) for name, _, s in grid]
    schedule = EpochSchedule(EPOCHS, batch, progress=False, eval_every=EPOCHS)

    def batched():
        models = build_models(grid)
        train(models, runs, data, schedule, device)
        return models

    def sequential():
        models = {}
        for spec, run in zip(grid, runs):
            one = build_models([spec])
            train(one, [run], data, schedule, device)
            models.update(one)
        return models

    # interleaved repeats, best of each: another process's load hits both sides alike
    times, results = {"batched": [], "sequential": []}, {}
    for _ in range(REPEATS):
        for label, fn in (("batched", batched), ("sequential", sequential)):
            t0 = time.perf_counter()
            trained = fn()
            sync()
            times[label].append(time.perf_counter() - t0)
            results[label] = trained
    batched_s, sequential_s = min(times["batched"]), min(times["sequential"])
    max_diff = max((p - q).abs().max().item() for name in results["sequential"]
                   for p, q in zip(results["sequential"][name].parameters(), results["batched"][name].parameters()))

    result = {
        "device": describe(device),
        "train_step_d512_batch2048": {
            "seconds_per_step": step_s, "samples_per_second": batch / step_s, "achieved_flops": achieved,
            "matmul_peak_flops": peak, "matmul_rates": rates, "matmul_fraction": achieved / peak,
        },
        "grid_fig5": {
            "models": len(grid), "epochs": EPOCHS, "steps_per_epoch": steps, "repeats": REPEATS,
            "sequential_seconds": sequential_s, "batched_seconds": batched_s, "all_seconds": times,
            "grid_speedup": sequential_s / batched_s, "max_abs_weight_difference": max_diff,
        },
    }
    write_json(args.out, result)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
