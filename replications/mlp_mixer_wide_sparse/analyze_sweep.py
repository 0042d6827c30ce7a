"""Accuracy against effective width S C at a fixed parameter count of the mixing layers (claim F5): Mixers whose
(S, C) come from the patch size and the channel count, with S^2 + C^2 (the mixing parameters at one expansion)
about equal, so that S C is largest where S and C are closest."""
import statistics

import numpy as np
import torch

from shared.pipeline.run import load_models, start_run, write_metrics
from shared.train.evaluate import accuracy

from .common import load_image_data
from .model import mixer_block_params


def main():
    run = start_run("checkpoint", "history", "data", "metrics", "arrays")
    data = load_image_data(run.args.data)
    x, y = data["x_test"], data["y_test"]
    models, specs, meta = load_models(run.args.checkpoint)
    configs = list(dict.fromkeys((s["tokens"], s["channels"]) for s in specs.values()))
    per_model = {n: accuracy(model, x, y, chunk=500) for n, model in models.items()}
    runs_of = {c: [n for n, s in specs.items() if (s["tokens"], s["channels"]) == c] for c in configs}
    acc = {c: statistics.fmean(per_model[n] for n in runs_of[c]) for c in configs}
    width = {c: c[0] * c[1] for c in configs}
    widest = max(configs, key=width.get)
    mixing = {c: mixer_block_params(*c, next(iter(specs.values()))["expansion"]) for c in configs}
    m = {"widest_minus_best_other": acc[widest] - max(v for c, v in acc.items() if c != widest),
         "mixing_params_rel_spread": (max(mixing.values()) - min(mixing.values())) / max(mixing.values())}
    for (s, c), v in acc.items():
        m[f"acc_s{s}_c{c}"] = v
    info = {"configs": [{"tokens": s, "channels": c, "effective_width": s * c, "mixing_params": mixing[(s, c)],
                         "params": specs[runs_of[(s, c)][0]]["params"]} for s, c in configs],
            "widest": list(widest), "test_images": len(x)}
    arrays = {"width": np.array([width[c] for c in configs], float),
              "acc": np.array([[per_model[n] for n in runs_of[c]] for c in configs]),
              "labels": np.array([f"S={s}, C={c}" for s, c in configs])}
    write_metrics(run.args.metrics, m, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(m)


if __name__ == "__main__":
    torch.set_grad_enabled(False)
    main()
