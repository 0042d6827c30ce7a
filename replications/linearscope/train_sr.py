"""Train the x2 super-resolution CNN: low resolution = 2x2 average pooling of the training images, mean squared
error to the originals, AdamW with a cosine schedule; one checkpoint."""
import math

import torch
import torch.nn.functional as F

from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import start_run

from .common import load_data
from .model import build


def downsample(x, channels, size):
    """Flat high-res images (N, C*size*size) -> flat low-res (N, C*(size/2)^2) by 2x2 averaging."""
    return F.avg_pool2d(x.view(-1, channels, size, size), 2).flatten(1)


def main():
    run = start_run("data", "checkpoint", "history")
    p = run.params
    data = load_data(run.args.data)
    spec = {"name": "sr", "seed": p["seed"], **p["image"], "arch": "sr", **{k: p["sr"][k] for k in ("width", "layers")}}
    seed_everything(run.seed(p["seed"], "init"))
    net = build(spec).to(run.device)
    hr = data["x_train"].to(run.device)
    lr_images = downsample(hr, spec["in_channels"], spec["size"])
    opt = torch.optim.AdamW(net.parameters(), lr=p["sr"]["lr"], weight_decay=0.0)
    order = run.generator(p["seed"], "order")
    batch, epochs = p["sr"]["batch_size"], p["sr"]["epochs"]
    history = []
    for epoch in range(epochs):
        for group in opt.param_groups:
            group["lr"] = p["sr"]["lr"] * 0.5 * (1 + math.cos(math.pi * epoch / epochs))
        perm = torch.randperm(len(hr), generator=order).to(run.device)
        total = 0.0
        for i in range(0, len(hr) - batch + 1, batch):
            idx = perm[i : i + batch]
            loss = F.mse_loss(net(lr_images[idx]), hr[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += loss.item()
        history.append({"epoch": epoch + 1, "train_mse": total / (len(hr) // batch)})
    meta = run.save(run.args.checkpoint, {"sr": net}, [spec], experiment="sr", final=history[-1])
    write_json(run.args.history, {**meta, "history": history})
    print(f"sr: {meta['wall_seconds']:.1f} s on {meta['device']}; train mse {history[-1]['train_mse']:.5f}")


if __name__ == "__main__":
    main()
