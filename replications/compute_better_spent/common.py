"""What this paper's scripts share: MNIST-5k as float tensors, the sweep's run specs, and the training loop (AdamW
with one parameter group per factor, each with its own lr, under one cosine schedule; shared.train.supervised sets
one lr for every group, so it cannot carry per-factor learning rates)."""
import math

import torch
import torch.nn.functional as F

from shared.data import images


def load_images(path):
    """Prepared dataset -> float32 pixels in [0, 1], flattened as stored (HWC for CIFAR), centred by the training
    mean; int64 labels."""
    return images.load_images(path, layout="hwc_flat", normalise="centre")


def run_name(structure, width, arm, lr=None):
    return f"{arm}-{structure}-w{width}" + ("" if lr is None else f"-lr{lr:g}")


def spec_of(cfg, structure, width):
    return {"structure": structure, "width": width, "d_input": cfg["d_input"], "n_classes": cfg["n_classes"],
            "depth": cfg["model"]["depth"], "btt_rank": cfg["model"]["btt_rank"],
            "monarch_blocks": cfg["model"]["monarch_blocks"]}


def batches(n, batch_size, steps, generator):
    """The index of every step's batch: epochs of a fixed permutation stream, dropping the last partial batch."""
    per_epoch = n // batch_size
    order = []
    while len(order) < steps:
        perm = torch.randperm(n, generator=generator)
        order.extend(perm[i * batch_size:(i + 1) * batch_size] for i in range(per_epoch))
    return order[:steps]


def to_device(data, device):
    return {k: v.to(device) for k, v in data.items()}


def train_model(model, groups, data, order, steps, label_smoothing=0.0, tail=0.1):
    """AdamW (wd 0) over the given batches with a per-step cosine schedule from each group's lr to 0. Returns the
    per-step train losses, the final train loss (mean of the last `tail` fraction of steps), test loss and error."""
    opt = torch.optim.AdamW(groups, weight_decay=0.0)
    base = [g["lr"] for g in groups]
    losses = []
    for step, idx in enumerate(order):
        idx = idx.to(data["x_train"].device)
        scale = 0.5 * (1 + math.cos(math.pi * step / steps))
        for g, lr in zip(opt.param_groups, base):
            g["lr"] = lr * scale
        loss = F.cross_entropy(model(data["x_train"][idx]), data["y_train"][idx], label_smoothing=label_smoothing)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    last = max(1, round(tail * steps))
    with torch.no_grad():
        logits = model(data["x_test"])
        test_loss = F.cross_entropy(logits, data["y_test"]).item()
        test_err = (logits.argmax(-1) != data["y_test"]).float().mean().item()
        train_logits = model(data["x_train"])
        train_err = (train_logits.argmax(-1) != data["y_train"]).float().mean().item()
    return {"losses": losses, "train_loss": sum(losses[-last:]) / last, "final_train_error": train_err,
            "test_loss": test_loss, "test_error": test_err}
