"""Train the pair (A, B) of one experiment and save both at every checkpoint epoch (epoch 0 = the init) into one
safetensors checkpoint, with the per-epoch history.

Adam (constant learning rate, the quick tier) or SGD with momentum and weight decay (constant, the full tier's
CIFAR-10 ResNet; the official code's schedulers are commented out, dossier 3). Batches are a fresh permutation per
epoch from the run's order seed, the last partial batch dropped. CIFAR-10 batches get the official augmentation
(random crop with 4-pixel zero padding and a horizontal flip), drawn from the same seeded stream.
"""
import torch
import torch.nn.functional as F

from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import start_run
from shared.train.supervised import evaluate

from .common import experiment_spec, load_data, run_specs
from .model import build


def crop_flip(x, gen):
    """Random 32x32 crop of the 4-pixel zero-padded batch and a random horizontal flip, per image."""
    n, c, h, w = x.shape
    padded = F.pad(x, (4, 4, 4, 4))
    i = torch.randint(0, 9, (n,), generator=gen).to(x.device)
    j = torch.randint(0, 9, (n,), generator=gen).to(x.device)
    flip = (torch.rand(n, generator=gen) < 0.5).to(x.device)
    rows = (i[:, None] + torch.arange(h, device=x.device))[:, None, :, None]
    cols = (j[:, None] + torch.arange(w, device=x.device))[:, None, None, :]
    out = padded[torch.arange(n, device=x.device)[:, None, None, None], torch.arange(c, device=x.device)[None, :, None, None],
                 rows, cols]
    return torch.where(flip[:, None, None, None], out.flip(3), out)


def train_one(model, specs, t, data, run, device):
    """Train one model; return ({epoch: state_dict copy} at the saved epochs, per-epoch history)."""
    saved_epochs = {s["epoch"] for s in specs}
    model.to(device).train()
    if t["optimizer"] == "adam":
        opt = torch.optim.Adam(model.parameters(), lr=t["lr"], weight_decay=t["weight_decay"])
    else:
        opt = torch.optim.SGD(model.parameters(), lr=t["lr"], momentum=t["momentum"], weight_decay=t["weight_decay"])
    gen = run.generator(specs[0]["order_seed"], "order")
    x, y = data["x_train"].to(device), data["y_train"].to(device)
    n, bs = len(x), t["batch_size"]
    states, history = {}, []
    if 0 in saved_epochs:
        states[0] = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
    for epoch in range(1, t["epochs"] + 1):
        perm = torch.randperm(n, generator=gen).to(device)
        total = torch.zeros((), device=device)
        for step in range(n // bs):
            idx = perm[step * bs: (step + 1) * bs]
            xb, yb = x.index_select(0, idx), y.index_select(0, idx)
            if t["augment"]:
                xb = crop_flip(xb, gen)
            loss = F.cross_entropy(model(xb), yb)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += loss.detach()
        row = {"epoch": epoch, "train_loss": total.item() / (n // bs)}
        if epoch in saved_epochs:
            states[epoch] = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
            row["test_acc"] = evaluate(model, data["x_test"].to(device), data["y_test"].to(device), chunk=4096)[1]
            print(f"  {specs[0]['role']} epoch {epoch}: train loss {row['train_loss']:.4f}, "
                  f"test acc {row['test_acc']:.4f}", flush=True)
        history.append(row)
    return states, history


def main():
    run = start_run("data", "checkpoint", "history")
    p = run.params  # {"experiment": name, "cfg": the slice of the config this experiment reads}
    spec = experiment_spec(p["cfg"], p["experiment"])
    data = load_data(run.args.data, spec["train"]["dataset"])
    d_input = data["x_train"][0].numel()
    specs = run_specs(p["cfg"], p["experiment"], d_input, int(data["y_train"].max()) + 1)
    models, history = {}, {}
    for role in ("a", "b"):
        mine = [s for s in specs if s["role"] == role]
        seed_everything(run.seed(mine[0]["seed"], "init"))  # the init depends on the init seed only
        model = build(mine[0])
        states, history[role] = train_one(model, mine, spec["train"], data, run, run.device)
        for s in mine:
            m = build(s)
            m.load_state_dict(states[s["epoch"]])
            models[s["name"]] = m
    final = {r: h[-1] for r, h in history.items()}
    meta = run.save(run.args.checkpoint, models, specs, experiment=p["experiment"], final=final)
    write_json(run.args.history, {**meta, "history": history})
    print(f"{p['experiment']}: {len(specs)} states, {meta['wall_seconds']:.1f} s on {meta['device']}")


if __name__ == "__main__":
    main()
