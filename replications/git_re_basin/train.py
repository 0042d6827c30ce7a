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
from shared.train.loop import epoch_batches, fit
from shared.train.supervised import evaluate

from .common import EVAL_CHUNK, load_data
from .model import build


def train_one(model, data, o, generator, snapshot_epochs, name, spec):
    """Train in place; return (history, {snapshot name: model copy}, {snapshot name: spec})."""
    x, y = data["x_train"], data["y_train"]
    per_epoch = -(-len(x) // o["batch_size"])  # the last partial batch is kept
    history, snaps, snap_specs, sums = [], {}, {}, [0.0, 0]

    def snapshot(epoch):
        if epoch in snapshot_epochs and epoch != o["epochs"]:
            snaps[f"{name}_epoch{epoch}"] = copy.deepcopy(model)
            snap_specs[f"{name}_epoch{epoch}"] = {**spec, "name": f"{name}_epoch{epoch}", "epoch": epoch}

    def loss_fn(model, batch):  # also sums the epoch's loss over samples (the last batch is smaller)
        loss = F.cross_entropy(model(batch[0]), batch[1])
        sums[0], sums[1] = sums[0] + float(loss) * len(batch[1]), sums[1] + len(batch[1])
        return loss

    def end_of_epoch(step, _):
        if (step + 1) % per_epoch:
            return
        epoch = (step + 1) // per_epoch
        test_loss, test_acc = evaluate(model, data["x_test"], data["y_test"], chunk=EVAL_CHUNK)
        history.append({"epoch": epoch, "train_loss": sums[0] / sums[1], "test_loss": test_loss, "test_acc": test_acc})
        snapshot(epoch)
        sums[:] = [0.0, 0]

    snapshot(0)
    batches = ((x[idx], y[idx]) for idx in epoch_batches(len(x), o["batch_size"], generator, drop_last=False))
    fit(model, batches, steps=o["epochs"] * per_epoch, loss_fn=loss_fn,
        make_optimizer=lambda m: torch.optim.Adam(m.parameters(), lr=o["lr"]), on_step=end_of_epoch)
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
