"""Train one model kind on INR weights, once per training-set size (the learning curve); checkpoint + history.

sine: regress the frequency b (standardised by the training subset's mean and std; MSE reported in b's units).
mnist / fashion_mnist: classify the image an INR represents (cross-entropy; test accuracy).
Batches are drawn with replacement from the first n training INRs, `optim.steps` steps for every n; AdamW
(shared.train.loop.fit).
"""
import torch
import torch.nn.functional as F

from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import start_run
from shared.train import loop

from .common import align, load_inrs, permute_batch, subset, widths_of
from .model import build


def fit(model, train, test, optim, regression, augment, generator, device):
    """Train `model` on `train` and return (test metric, training-loss trace): MSE (regression) or accuracy."""
    model.to(device)
    y = train[2].float()
    mu, sd = (y.mean(), y.std().clamp_min(1e-6)) if regression else (0.0, 1.0)
    trace = []

    def loss_fn(model, batch):
        w, b, target = batch
        out = model([t.to(device) for t in w], [t.to(device) for t in b])
        if regression:
            return F.mse_loss(out[:, 0], ((target.float() - mu) / sd).to(device))
        return F.cross_entropy(out, target.long().to(device))

    def permute(batch):  # permutation augmentation, from the batches' own stream
        w, b, target = batch
        return (*permute_batch(w, b, generator), target)

    drawn = (subset(train, index) for index in loop.with_replacement(len(y), optim["batch_size"], generator))
    loop.fit(model, drawn, steps=optim["steps"], loss_fn=loss_fn,
             make_optimizer=lambda m: torch.optim.AdamW(m.parameters(), lr=optim["lr"],
                                                        weight_decay=optim["weight_decay"]),
             augment=permute if augment else None, on_step=lambda step, loss: trace.append(loss.item()))
    return evaluate(model, test, regression, mu, sd, device), trace


@torch.no_grad()
def evaluate(model, data, regression, mu=0.0, sd=1.0, device="cpu", batch=512):
    model.eval()
    outs = []
    for start in range(0, len(data[2]), batch):
        w, b, _ = subset(data, slice(start, start + batch))
        outs.append(model([t.to(device) for t in w], [t.to(device) for t in b]).cpu())
    model.train()
    out, y = torch.cat(outs), data[2]
    if regression:
        return ((out[:, 0] * sd + mu - y.float()) ** 2).mean().item()
    return (out.argmax(1) == y.long()).float().mean().item()


def main():
    run = start_run("data", "checkpoint", "history")
    p = run.params
    data = load_inrs(run.args.data)
    if p["kind"] == "mlp_align":  # every INR permuted to match the first training INR (weight matching)
        reference = subset(data["train"], slice(0, 1))
        data = {split: align(part, reference) for split, part in data.items()}
        print(f"aligned {sum(len(part[2]) for part in data.values())} INRs ({run.wall():.0f} s)", flush=True)
    regression = p["task"] == "sine"
    widths = widths_of(data["train"][0])
    models, specs, history = {}, [], {}
    for n in p["n_train"]:
        spec = {"name": f"n{n}", "seed": p["seed"], "kind": p["kind"], "task": p["task"], "n_train": n,
                "widths": widths, "n_outputs": 1 if regression else p["n_classes"], "model": p["model"]}
        seed_everything(run.seed(p["seed"], "init"))  # the same init for every n
        model = build(spec)
        gen = run.generator(p["seed"], f"batches-n{n}")
        train = subset(data["train"], slice(0, n))
        metric, trace = fit(model, train, data["test"], p["optim"], regression, p["kind"] == "mlp_aug", gen, run.device)
        models[spec["name"]], history[spec["name"]] = model.cpu(), {"n_train": n, "test": metric,
                                                                  "final_loss": sum(trace[-50:]) / len(trace[-50:])}
        specs.append(spec)
        print(f"{p['task']} {p['kind']} n={n}: test {'MSE' if regression else 'accuracy'} {metric:.4g} "
              f"({run.wall():.0f} s)", flush=True)
    meta = run.save(run.args.checkpoint, models, specs, experiment=f"{p['task']}_{p['kind']}")
    write_json(run.args.history, {**meta, "history": history,
                                  "parameters": sum(q.numel() for q in models[specs[0]["name"]].parameters())})


if __name__ == "__main__":
    main()
