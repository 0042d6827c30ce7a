"""Train the pair (A, B) of one experiment, once per seed pair, and save every model at every checkpoint epoch (epoch 0 = the init) into one
safetensors checkpoint, with the per-epoch history.

Adam (constant learning rate, the quick tier) or SGD with momentum and weight decay; `schedule: warmup_cosine` (the
full tier's CIFAR-10 ResNet, as the paper's setup states) holds per epoch a rate rising linearly from `warmup_lr` to
`lr` over `warmup_epochs`, then falling on a cosine to 0 at the last epoch. Batches are a fresh permutation per
epoch from the run's order seed, the last partial batch dropped. CIFAR-10 batches get the official augmentation
(random crop with 4-pixel zero padding and a horizontal flip), drawn from the same seeded stream.
"""
import torch
import torch.nn.functional as F

from shared.data.augment import crop_flip
from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.io.smoke import cap
from shared.pipeline.run import start_run
from shared.train.evaluate import accuracy
from shared.train.loop import epoch_batches, epochwise, fit
from shared.train.schedules import warmup_cosine_lr

from .common import experiment_spec, load_data, run_specs
from .model import build


def train_one(model, specs, t, data, run, device):
    """Train one model; return ({epoch: state_dict copy} at the saved epochs, per-epoch history)."""
    saved_epochs = {s["epoch"] for s in specs}
    model.to(device).train()
    x, y = data["x_train"].to(device), data["y_train"].to(device)
    per_epoch = len(x) // t["batch_size"]
    gen = run.generator(specs[0]["order_seed"], "order")  # each epoch's order, then that epoch's crops and flips
    states, history, total = {}, [], torch.zeros((), device=device)

    def make_optimizer(model):
        if t["optimizer"] == "adam":
            return torch.optim.Adam(model.parameters(), lr=t["lr"], weight_decay=t["weight_decay"])
        return torch.optim.SGD(model.parameters(), lr=t["lr"], momentum=t["momentum"], weight_decay=t["weight_decay"])

    def snapshot(epoch):
        states[epoch] = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}

    def end_of_epoch(step, loss):
        total.add_(loss.detach())
        if (step + 1) % per_epoch:
            return
        epoch = (step + 1) // per_epoch
        row = {"epoch": epoch, "train_loss": total.item() / per_epoch}
        if epoch in saved_epochs:
            snapshot(epoch)
            row["test_acc"] = accuracy(model, data["x_test"].to(device), data["y_test"].to(device), chunk=1000,
                                       count_flops=False)  # a smoke run evaluates 3 chunks
            print(f"  {specs[0]['role']} epoch {epoch}: train loss {row['train_loss']:.4f}, "
                  f"test acc {row['test_acc']:.4f}", flush=True)
        history.append(row)
        total.zero_()

    lr_policy = None  # constant
    if t.get("schedule") == "warmup_cosine":
        lr_policy = epochwise(lambda lr, epoch, epochs: warmup_cosine_lr(lr, epoch, epochs, t["warmup_epochs"],
                                                                         t["warmup_lr"]), per_epoch, t["epochs"])
    if 0 in saved_epochs:
        snapshot(0)
    batches = ((x.index_select(0, idx), y.index_select(0, idx))
               for idx in epoch_batches(len(x), t["batch_size"], gen, device))
    fit(model, batches, steps=t["epochs"] * per_epoch, loss_fn=lambda m, b: F.cross_entropy(m(b[0]), b[1]),
        make_optimizer=make_optimizer, lr_policy=lr_policy, augment=(lambda b: (crop_flip(b[0], gen), b[1])) if t["augment"] else None,
        on_step=end_of_epoch)
    return states, history


def main():
    run = start_run("data", "checkpoint", "history")
    p = run.params  # {"experiment": name, "cfg": the slice of the config this experiment reads}
    spec = experiment_spec(p["cfg"], p["experiment"])
    data = load_data(run.args.data, spec["train"]["dataset"])
    d_input = data["x_train"][0].numel()
    specs = run_specs(p["cfg"], p["experiment"], d_input, int(data["y_train"].max()) + 1)
    models, history = {}, {}
    for pair, role in sorted({(s["pair"], s["role"]) for s in specs}):
        mine = [s for s in specs if (s["pair"], s["role"]) == (pair, role)]
        seed_everything(run.seed(mine[0]["seed"], "init"))  # the init depends on the init seed only
        model = build(mine[0])
        states, history[f"p{pair}_{role}"] = train_one(model, mine, spec["train"], data, run, run.device)
        for s in mine:
            m = build(s)
            # a smoke run's capped loop skips the epochs between its first steps and its last: their snapshots are not
            # taken, and the last one stands in (outside a smoke run a missing epoch is an error)
            m.load_state_dict(states[s["epoch"] if s["epoch"] in states or cap() is None else max(states)])
            models[s["name"]] = m
    final = {r: h[-1] for r, h in history.items()}
    meta = run.save(run.args.checkpoint, models, specs, experiment=p["experiment"], final=final)
    write_json(run.args.history, {**meta, "history": history})
    print(f"{p['experiment']}: {len(specs)} states, {meta['wall_seconds']:.1f} s on {meta['device']}")


if __name__ == "__main__":
    main()
