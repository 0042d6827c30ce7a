"""Bilinear vs ReGLU vs SwiGLU MLPs in the same transformer (App I, Table 6).

Equal steps: the final validation loss of each run. Equal wall time: the step time of each variant is measured
here, in one process, by timing training steps of the three models in turn (so load and clock drift hit all of
them alike); a variant's loss at bilinear's time budget is read off its validation curve at step
S * t_bilinear / t_variant (capped at S: no run trained beyond S steps). Reading a curve mid-schedule is not the
same as training to a shorter schedule; the deviations section says so.
"""
import time

import numpy as np
import torch

from shared.data.tokens import load_tokens
from shared.io.files import read_json
from shared.pipeline.run import start_run, write_metrics
from shared.train.language_model import random_windows

from .common import build


def step_seconds(specs, train_tokens, batch_size, rounds, steps, gen):
    """Median seconds per training step (forward, backward, AdamW) of each spec, timed round-robin on windows
    drawn from `gen`."""
    models = {name: build(spec) for name, spec in specs.items()}
    opts = {name: torch.optim.AdamW(m.parameters(), lr=1e-4) for name, m in models.items()}
    times = {name: [] for name in models}
    for r in range(rounds + 1):  # round 0 warms up
        for name, model in models.items():
            t0 = time.perf_counter()
            for _ in range(steps):
                loss = model.loss(random_windows(train_tokens, batch_size, model.n_ctx + 1, gen))
                opts[name].zero_grad(set_to_none=True)
                loss.backward()
                opts[name].step()
            if r:
                times[name].append((time.perf_counter() - t0) / steps)
    return {name: float(np.median(t)) for name, t in times.items()}


def loss_at_step(history, step):
    steps = [h["step"] for h in history]
    return float(np.interp(step, steps, [h["val_loss"] for h in history]))


def main():
    run = start_run("data", "metrics", "arrays", many=("histories",))
    args = run.args
    p = args.params
    runs = {h["runs"][0]["mlp"]: h for h in map(read_json, args.histories)}
    train_tokens, _, _ = load_tokens(args.data)
    t = p["timing"]
    seconds = step_seconds({k: r["runs"][0] for k, r in runs.items()}, train_tokens, p["train"]["batch_size"],
                           t["rounds"], t["steps"], run.generator(p["train"]["seed"], "timing"))
    final = {k: r["history"][-1]["val_loss"] for k, r in runs.items()}
    total = runs["bilinear"]["history"][-1]["step"]
    equal_time = {k: loss_at_step(r["history"], min(total, total * seconds["bilinear"] / seconds[k]))
                  for k, r in runs.items()}
    metrics = {
        "final_val_loss": final, "step_seconds": seconds,
        "step_time_ratio_to_bilinear": {k: s / seconds["bilinear"] for k, s in seconds.items()},
        "bilinear_minus_swiglu": final["bilinear"] - final["swiglu"],
        "bilinear_minus_reglu": final["bilinear"] - final["reglu"],
        "equal_time_val_loss": equal_time,
        "equal_time_bilinear_minus_swiglu": equal_time["bilinear"] - equal_time["swiglu"],
        "tokens_per_second": {k: r["history"][-1]["tokens"] / r["history"][-1]["train_seconds"] for k, r in runs.items()},
        "steps": total, "parameters": {k: r["parameters"] for k, r in runs.items()},
    }
    arrays = {f"{k}_{c}": np.array([h[c] for h in r["history"]]) for k, r in runs.items()
              for c in ("step", "val_loss", "train_loss")}
    arrays["names"] = np.array(sorted(runs))
    arrays["step_seconds"] = np.array([seconds[k] for k in sorted(runs)])
    write_metrics(args.metrics, metrics, runs["bilinear"], info={"device": runs["bilinear"]["device"]}, arrays=arrays,
                  arrays_path=args.arrays)
    print(metrics)


if __name__ == "__main__":
    main()
