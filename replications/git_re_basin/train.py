"""Train the two models (seeds) of one width in one run: Adam, constant lr, cross-entropy, minibatches in a
per-seed shuffled order (the two models differ in init and data order). Snapshots of each model at the
configured epochs (epoch 0 = init) go into the same safetensors checkpoint, for the barrier over training (Fig. 3).
"""
import copy

import torch
import torch.nn.functional as F

from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import start_run
from shared.train.supervised import evaluate

from .common import EVAL_CHUNK, load_data
from .model import build


def train_one(model, data, o, generator, snapshot_epochs, name, spec):
    """Train in place; return (history, {snapshot name: model copy}, {snapshot name: spec})."""
    opt = torch.optim.Adam(model.parameters(), lr=o["lr"])
    x, y = data["x_train"], data["y_train"]
    history, snaps, snap_specs = [], {}, {}

    def snapshot(epoch):
        if epoch in snapshot_epochs and epoch != o["epochs"]:
            snaps[f"{name}_epoch{epoch}"] = copy.deepcopy(model)
            snap_specs[f"{name}_epoch{epoch}"] = {**spec, "name": f"{name}_epoch{epoch}", "epoch": epoch}

    snapshot(0)
    for epoch in range(1, o["epochs"] + 1):
        order = torch.randperm(len(x), generator=generator)
        total, seen = 0.0, 0
        for i in range(0, len(x), o["batch_size"]):
            idx = order[i:i + o["batch_size"]]
            loss = F.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total, seen = total + float(loss) * len(idx), seen + len(idx)
        test_loss, test_acc = evaluate(model, data["x_test"], data["y_test"], chunk=EVAL_CHUNK)
        history.append({"epoch": epoch, "train_loss": total / seen, "test_loss": test_loss, "test_acc": test_acc})
        snapshot(epoch)
    return history, snaps, snap_specs


def main():
    run = start_run("data", "checkpoint", "history")
    p = run.params  # this job's kind and width, and the training settings
    data = load_data(run.args.data)
    snapshot_epochs = set(p["snapshot_epochs"])
    models, specs, history = {}, [], {}
    for seed in p["seeds"]:
        name = f"{p['kind']}_h{p['width']}_seed{seed}"
        spec = {"name": name, "seed": seed, "kind": p["kind"], "d_input": p["d_input"], "d_hidden": p["width"],
                "n_hidden": p["n_hidden"], "n_classes": p["n_classes"]}
        seed_everything(run.seed(seed, "init"))
        model = build(spec).to(run.device)
        on_device = {k: v.to(run.device) for k, v in data.items()}
        h, snaps, snap_specs = train_one(model, on_device, p["optim"], run.generator(seed, "order"), snapshot_epochs,
                                         name, spec)
        history[name] = h
        models[name], specs = model.cpu(), specs + [spec]
        for snap_name, snap in snaps.items():
            models[snap_name] = snap.cpu()
            specs.append(snap_specs[snap_name])
        print(f"{name}: train loss {h[-1]['train_loss']:.4f}, test acc {h[-1]['test_acc']:.4f}", flush=True)
    final = {name: h[-1] for name, h in history.items()}
    meta = run.save(run.args.checkpoint, models, specs, experiment=f"{p['kind']}_h{p['width']}", final=final)
    write_json(run.args.history, {**meta, "history": history})
    print(f"{len(models)} models, {meta['wall_seconds']:.1f} s on {meta['device']}")


if __name__ == "__main__":
    main()
