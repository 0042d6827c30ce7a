"""Base learning rate, tuned once before the sweep: the dense model at the base width on a small lr grid (the
dossier's 6a plan), the optimum refined by a parabola in log lr (shared.train.lr_sweep.optimal_on_grid) and then
snapped to the grid point nearest it, so the sweep trains at a grid lr."""
import math

import torch

from shared.io.files import write_json
from shared.nn.parametrization import param_groups
from shared.pipeline.run import start_run
from shared.train.lr_sweep import optimal_on_grid

from .common import augmentation, batches, load_images, spec_of, to_device, train_model
from .model import build, dense_base_multipliers


def main():
    run = start_run("data", "out")
    p = run.params
    seed = p["seeds"][0]  # the base lr is tuned once, at the first seed
    data = to_device(load_images(run.args.data), run.device)
    spec = spec_of(p, "dense", p["base_width"])
    base = dense_base_multipliers(spec, p["base_width"])
    order = batches(len(data["y_train"]), p["batch_size"], p["steps"], run.generator(seed, "batches"))
    losses = []
    for lr in p["lr_grid"]:
        torch.manual_seed(seed)
        model, rows = build(spec, "aware", run.generator(seed, "init"))
        model.to(run.device)
        result = train_model(model, param_groups(rows, lr, base_layers=base), data,
                             order, p["steps"], p["label_smoothing"], p["tail"],
                             augmentation(p, run.generator(seed, "augment")))
        losses.append(result["train_loss"])
        print(f"dense w={p['base_width']} lr={lr:g}: train loss {result['train_loss']:.4f}", flush=True)
    refined = optimal_on_grid(p["lr_grid"], losses)
    refined = float(refined[0] if isinstance(refined, (tuple, list)) else refined)
    chosen = min(p["lr_grid"], key=lambda lr: abs(math.log(lr / refined)))
    write_json(run.args.out, {"lr_grid": p["lr_grid"], "losses": losses, "refined": refined, "lr": chosen})


if __name__ == "__main__":
    main()
