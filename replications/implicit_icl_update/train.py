"""Train every contextual block of the config on fresh in-context linear-regression prompts (L2 loss on the query;
Adam, shared.train.loop.fit with a stream of batches).

One checkpoint holds each trained model and, as `<name>_init`, the same model at its initialisation (the untrained
control). Every `eval_every` steps the history logs the training loss and, on a fixed validation set (float64 copy
of the model), the in-context validation loss and the validation loss computed via dW (query only, patched W: E1).
"""
import copy

import torch

from shared.data.icl_regression import embed, sample_prompts
from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import start_run
from shared.train.loop import fit

from .model import build


def prompts(batch, p, gen, dtype=torch.float32):
    pr = sample_prompts(batch, p["n"], p["d"], gen, dtype=dtype)
    return embed(pr), pr.y[:, -1]


@torch.no_grad()
def val_losses(model, z, y):
    m = copy.deepcopy(model).double()
    in_context = ((m(z) - y) ** 2).mean().item()
    via_dw = ((m.patched_prediction(z) - y) ** 2).mean().item() if m.layers == 1 else None
    return in_context, via_dw


def train_one(model, p, gen, val_z, val_y, device):
    """Adam on a fresh batch of prompts every step; return the history rows."""
    rows = []

    def validate(step):  # a row every eval_every steps (and at the end), of the weights after `step` updates
        if step % p["eval_every"] == 0 or step == p["steps"]:
            ic, dw = val_losses(model.cpu(), val_z, val_y)
            model.to(device)
            rows.append({"step": step, "val_in_context": ic, "val_via_dw": dw,
                         "train": rows[-1]["train"] if rows else None})

    def record(step, loss):  # a row's training loss is that of the batch of its own step
        if step % p["eval_every"] == 0:
            rows[-1]["train"] = loss.item()
        validate(step + 1)

    def stream():
        while True:
            z, y = prompts(p["batch"], p, gen)
            yield z.to(device), y.to(device)

    validate(0)
    fit(model, stream(), steps=p["steps"], loss_fn=lambda m, b: ((m(b[0]) - b[1]) ** 2).mean(),
        make_optimizer=lambda m: torch.optim.Adam(m.parameters(), lr=p["lr"]), on_step=record)
    return rows


def main():
    run = start_run("checkpoint", "history")
    p = run.params
    models, specs, history = {}, [], {}
    val_z, val_y = prompts(p["val_tasks"], p, run.generator(0, "validation"), torch.float64)
    for name, m in p["models"].items():
        for seed in p["seeds"]:
            spec = {"name": f"{name}_s{seed}", "seed": seed, "d": p["d"], "width": p["width"], **m}
            seed_everything(run.seed(seed, "init"))
            model = build(spec).to(run.device)
            models[f"{spec['name']}_init"] = copy.deepcopy(model).cpu()
            specs.append({**spec, "name": f"{spec['name']}_init", "trained": False})
            rows = train_one(model, p, run.generator(seed, f"data/{name}"), val_z, val_y, run.device)
            models[spec["name"]] = model.cpu()
            specs.append({**spec, "trained": True})
            history[spec["name"]] = rows
            print(f"{spec['name']}: val in-context {rows[-1]['val_in_context']:.4f}, via dW {rows[-1]['val_via_dw']}"
                  f" ({run.wall():.1f} s)", flush=True)
    meta = run.save(run.args.checkpoint, models, specs, experiment="blocks")
    write_json(run.args.history, {**meta, "history": history})


if __name__ == "__main__":
    main()
