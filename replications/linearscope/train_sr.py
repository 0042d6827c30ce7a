"""Train the x2 super-resolution CNN: low resolution = 2x2 average pooling of the training images, mean squared
error to the originals, AdamW with a per-epoch cosine schedule (shared.train.loop.fit); one net per seed (run
`sr_s<seed>`), one checkpoint."""
import torch
import torch.nn.functional as F

from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import start_run
from shared.train.loop import epoch_batches, epochwise, fit
from shared.train.schedules import cosine_lr

from .common import load_data
from .model import build


def downsample(x, channels, size):
    """Flat high-res images (N, C*size*size) -> flat low-res (N, C*(size/2)^2) by 2x2 averaging."""
    return F.avg_pool2d(x.view(-1, channels, size, size), 2).flatten(1)


def train_one(spec, p, run, hr, lr_images):
    """One SR net at its spec's seed; returns it and its per-epoch training MSE."""
    seed_everything(run.seed(spec["seed"], "init"))
    net = build(spec).to(run.device)
    batch, epochs = p["sr"]["batch_size"], p["sr"]["epochs"]
    per_epoch, history, total = len(hr) // batch, [], [0.0]

    def end_of_epoch(step, loss):
        total[0] += loss.item()
        if (step + 1) % per_epoch == 0:
            history.append({"epoch": (step + 1) // per_epoch, "train_mse": total[0] / per_epoch})
            total[0] = 0.0

    order = epoch_batches(len(hr), batch, run.generator(spec["seed"], "order"), run.device)
    fit(net, ((lr_images[idx], hr[idx]) for idx in order), steps=epochs * per_epoch,
        loss_fn=lambda net, b: F.mse_loss(net(b[0]), b[1]),
        make_optimizer=lambda net: torch.optim.AdamW(net.parameters(), lr=p["sr"]["lr"], weight_decay=0.0),
        lr_policy=epochwise(cosine_lr, per_epoch, epochs), on_step=end_of_epoch)
    return net, history


def main():
    run = start_run("data", "checkpoint", "history")
    p = run.params
    data = load_data(run.args.data)
    specs = [{"name": f"sr_s{seed}", "seed": seed, **p["image"], "arch": "sr",
              **{k: p["sr"][k] for k in ("width", "layers")}} for seed in p["seeds"]]
    hr = data["x_train"].to(run.device)
    lr_images = downsample(hr, specs[0]["in_channels"], specs[0]["size"])
    nets, history = {}, {}
    for spec in specs:
        nets[spec["name"]], history[spec["name"]] = train_one(spec, p, run, hr, lr_images)
    final = {name: h[-1] for name, h in history.items()}
    meta = run.save(run.args.checkpoint, nets, specs, experiment="sr", final=final)
    write_json(run.args.history, {**meta, "history": history})
    print(f"sr: {meta['wall_seconds']:.1f} s on {meta['device']}; train mse "
          + ", ".join(f"{n} {f['train_mse']:.5f}" for n, f in final.items()))


if __name__ == "__main__":
    main()
