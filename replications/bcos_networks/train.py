"""Train one model (a B-cos network at one B, or the ReLU baseline) with the official recipe: Adam, binary
cross-entropy on one-hot targets, a per-epoch cosine learning rate lr cos(pi e / (2 E)) + lr_min (the official
CIFAR-10 schedule 1e-3 cos(pi e / 200) + 1e-5 at E = 100), optional random-crop (pad 4) and flip augmentation."""
import math

import torch
import torch.nn.functional as F

from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import start_run
from shared.train.progress import Progress

from .common import accuracy, load_data
from .model import build


def augment(x, gen, pad=4):
    """Random crop of the zero-padded image (torchvision RandomCrop(size, padding=pad)) and a random horizontal flip."""
    n, c, h, w = x.shape
    padded = F.pad(x, (pad,) * 4)
    i, j = (torch.randint(0, 2 * pad + 1, (n,), generator=gen).to(x.device) for _ in range(2))
    rows = (i[:, None] + torch.arange(h, device=x.device))[:, None, :, None]
    cols = (j[:, None] + torch.arange(w, device=x.device))[:, None, None, :]
    out = padded[torch.arange(n, device=x.device)[:, None, None, None], torch.arange(c, device=x.device)[None, :, None, None],
                 rows, cols]
    flip = (torch.rand(n, generator=gen) < 0.5).to(x.device)[:, None, None, None]
    return torch.where(flip, out.flip(-1), out)


def main():
    run = start_run("data", "checkpoint", "history")
    p = run.params
    data = {k: v.to(run.device) for k, v in load_data(run.args.data).items()}
    spec = {"name": f"{p['arm']}_s{p['seed']}", "arm": p["arm"], "seed": p["seed"], "arch": p["arch"], "b": p["b"],
            "n_classes": p["n_classes"], "in_channels": data["x_train"].shape[1], **p["model"]}
    seed_everything(run.seed(spec["seed"], "init"))
    model = build(spec).to(run.device)
    model.calibrate(data["x_train"][: p["calibration_images"]])
    base_lr = p["relu_lr"] if p["arch"] == "relu" else p["lr"]
    optimizer = torch.optim.Adam(model.parameters(), lr=base_lr)
    gen = run.generator(spec["seed"], "data")
    n, bs = len(data["x_train"]), p["batch_size"]
    history = []
    for epoch in Progress(p["epochs"], f"train {p['arm']}", unit="epoch"):
        lr = base_lr * math.cos(math.pi * epoch / (2 * p["epochs"])) + p["lr_min"]
        for group in optimizer.param_groups:
            group["lr"] = lr
        model.train()
        order, loss_sum = torch.randperm(n, generator=gen).to(run.device), 0.0
        for start in range(0, n - bs + 1, bs):
            idx = order[start:start + bs]
            x, y = data["x_train"][idx], data["y_train"][idx]
            if p["augment"]:
                x = augment(x, gen)
            logits = model(x)
            loss = F.binary_cross_entropy_with_logits(logits, F.one_hot(y, p["n_classes"]).to(logits.dtype))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            loss_sum += loss.item()
        model.eval()
        history.append({"epoch": epoch + 1, "lr": lr, "train_loss": loss_sum / (n // bs),
                        "test_acc": accuracy(model, data["x_test"], data["y_test"])})
    meta = run.save(run.args.checkpoint, {spec["name"]: model.cpu()}, [spec], experiment=p["arm"], final=history[-1])
    write_json(run.args.history, {**meta, "history": history})
    print(f"{p['arm']}: test acc {history[-1]['test_acc']:.4f}, train loss {history[-1]['train_loss']:.4f}, "
          f"{meta['wall_seconds']:.1f} s on {meta['device']}")


if __name__ == "__main__":
    main()
