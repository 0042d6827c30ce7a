"""XOR (claims F1, K1, K2): accuracy of every trained layer on the four points, the fraction of seeds that solve
XOR per K, the same for the layers at their init (control), and a trained Tversky layer's decision map."""
import statistics

import numpy as np
import torch

from shared.io.runtime import seed_everything
from shared.pipeline.run import derive_seed, load_models, start_run, write_metrics

from .common import XOR_X, XOR_Y
from .model import build


def acc(model, x=XOR_X, y=XOR_Y):
    with torch.no_grad():
        return float((model(x).argmax(-1) == y).float().mean())


def main():
    run = start_run("checkpoint", "history", "metrics", "arrays")
    x = run.params["xor"]
    models, specs, meta = load_models(run.args.checkpoint)
    accs = {name: acc(m) for name, m in models.items()}
    untrained = {}
    for name, spec in specs.items():
        seed_everything(derive_seed(spec["seed"], "init"))
        untrained[name] = acc(build(spec).eval())
    m = {}
    for k in x["features"]:
        names = [f"tversky-k{k}-seed{s}" for s in x["seeds"]]
        m[f"tversky_k{k}_solved_fraction"] = statistics.fmean(accs[n] == 1.0 for n in names)
        m[f"untrained_tversky_k{k}_solved_fraction"] = statistics.fmean(untrained[n] == 1.0 for n in names)
    m["tversky_best_solved_fraction"] = max(m[f"tversky_k{k}_solved_fraction"] for k in x["features"])
    m["untrained_tversky_best_solved_fraction"] = max(m[f"untrained_tversky_k{k}_solved_fraction"]
                                                      for k in x["features"])
    m["linear_acc_max"] = max(accs[f"linear-seed{s}"] for s in x["seeds"])
    tv = [n for n in models if n.startswith("tversky")]
    m["tversky_alpha_mean"] = statistics.fmean(float(models[n].alpha) for n in tv)
    m["tversky_beta_mean"] = statistics.fmean(float(models[n].beta) for n in tv)
    # a decision map of the first solved Tversky layer (largest K first) and of the first linear layer
    grid = torch.linspace(-0.5, 1.5, 81)
    pts = torch.stack(torch.meshgrid(grid, grid, indexing="xy"), -1).reshape(-1, 2)
    solved = [n for n in sorted(tv, key=lambda n: -int(n.split("-k")[1].split("-")[0])) if accs[n] == 1.0]
    shown = solved[0] if solved else tv[0]
    with torch.no_grad():
        maps = {"tversky": models[shown](pts).softmax(-1)[:, 1].reshape(81, 81).numpy(),
                "linear": models[f"linear-seed{x['seeds'][0]}"](pts).softmax(-1)[:, 1].reshape(81, 81).numpy()}
    arrays = {"features": np.array(x["features"], float),
              "solved": np.array([m[f"tversky_k{k}_solved_fraction"] for k in x["features"]]),
              "untrained_solved": np.array([m[f"untrained_tversky_k{k}_solved_fraction"] for k in x["features"]]),
              "linear_acc": np.array([accs[f"linear-seed{s}"] for s in x["seeds"]]),
              "grid": grid.numpy(), "map_tversky": maps["tversky"], "map_linear": maps["linear"]}
    info = {"seeds": x["seeds"], "shown": shown, "acc": accs}
    write_metrics(run.args.metrics, m, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(m)


if __name__ == "__main__":
    main()
