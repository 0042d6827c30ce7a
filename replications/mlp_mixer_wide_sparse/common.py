"""What this paper's scripts share: the image data, the run specs of the two image experiments (compare, sweep),
their training (AdamW, cosine, cross-entropy, through shared.train.loop.fit) and test accuracy."""
import torch
import torch.nn.functional as F

from shared.data import images
from shared.train.loop import epoch_batches, fit
from shared.train.schedules import cosine_lr

from .model import KINDS

GROUPS = ("compare", "sweep")


def load_image_data(path):
    """(N, c, H, W) in [0, 1], centred by the training set's mean image."""
    return images.load_images(path, layout="chw", normalise="centre")


def tokens(size, patch):
    return (size // patch) ** 2


def run_name(kind, patch, channels, seed):
    return f"{kind}-p{patch}-c{channels}-seed{seed}"


def specs(cfg, group):
    """One spec per model of `group`. compare: every kind at the compare (patch, channels) and each seed; sweep:
    the Mixer at each (patch, channels) of the sweep and each seed, one expansion for all."""
    base = {"in_channels": cfg["image_shape"][0], "n_classes": cfg["n_classes"], "act": cfg["act"],
            "depth": cfg["depth"]}
    size, out = cfg["image_shape"][1], []
    if group == "compare":
        c = cfg["compare"]
        grid = [(kind, c["patch"], c["channels"], c["expansion"]) for kind in KINDS]
    else:
        grid = [("mixer", patch, channels, cfg["sweep"]["expansion"]) for patch, channels in cfg["sweep"]["configs"]]
    for seed in cfg["seeds"]:
        for kind, patch, channels, expansion in grid:
            out.append({"name": run_name(kind, patch, channels, seed), "kind": kind, "patch": patch,
                        "tokens": tokens(size, patch), "channels": channels, "expansion": expansion, "seed": seed,
                        **base})
    return out


def train_model(model, data, t, generator, device):
    """AdamW with a per-step cosine schedule; returns the training loss averaged per epoch."""
    x, y = data["x_train"].to(device), data["y_train"].to(device)
    per_epoch, steps = len(x) // t["batch_size"], t["epochs"] * (len(x) // t["batch_size"])
    model.to(device).train()
    history, sums = [], {"loss": 0.0}

    def on_step(step, loss):
        sums["loss"] += loss.item()
        if (step + 1) % per_epoch == 0:
            history.append({"epoch": (step + 1) // per_epoch, "train_loss": sums["loss"] / per_epoch})
            sums["loss"] = 0.0

    fit(model, ((x[i], y[i]) for i in epoch_batches(len(x), t["batch_size"], generator, device)), steps=steps,
        loss_fn=lambda m, b: F.cross_entropy(m(b[0]), b[1]),
        make_optimizer=lambda m: torch.optim.AdamW(m.parameters(), lr=t["lr"], weight_decay=t["weight_decay"]),
        lr_policy=lambda base, step: cosine_lr(base, step, steps), on_step=on_step)
    return history

