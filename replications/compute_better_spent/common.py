"""What this paper's scripts share: MNIST-5k as float tensors, the sweep's run specs, and the training (AdamW with
one parameter group per factor, each with its own lr, under one per-step cosine: shared.train.loop.fit scales each
group's base rate)."""
import itertools

import numpy as np
import torch
import torch.nn.functional as F

from shared.data import images
from shared.data.augment import crop_flip
from shared.train.chunked import chunked
from shared.train.loop import epoch_batches, fit
from shared.train.schedules import cosine_lr


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
    """The index of every step's batch: epochs of a fixed permutation stream, dropping the last partial batch
    (a list: every model of a sweep trains on the same batches)."""
    return list(itertools.islice(epoch_batches(n, batch_size, generator), steps))


def to_device(data, device):
    return {k: v.to(device) for k, v in data.items()}


def augmentation(cfg, generator):
    """The paper's training augmentation where the config asks for it (`augment`, the full tier's CIFAR-10): per
    image a random crop of the 4-pixel zero-padded image and a horizontal flip (images are HWC-flat, square, 3
    channels), then MixUp of the batch with itself reversed at one Beta(alpha, alpha) weight per batch (timm's Mixup
    in 'batch' mode, as the paper's code). Returns augment(x, y) -> (x, y, y of the mixed-in images, weight), or
    None. The crops and flips come from `generator`, the weights from a stream seeded by it."""
    spec = cfg.get("augment")
    if not spec:
        return None
    weights = np.random.default_rng(int(torch.randint(2**62, (1,), generator=generator)))
    side = round((cfg["d_input"] // 3) ** 0.5)

    def augment(x, y):
        if spec["crop_flip"]:
            nchw = x.view(len(x), side, side, 3).permute(0, 3, 1, 2)
            x = crop_flip(nchw, generator).permute(0, 2, 3, 1).reshape(len(x), -1)
        lam = float(weights.beta(spec["mixup_alpha"], spec["mixup_alpha"])) if spec["mixup_alpha"] else 1.0
        return lam * x + (1 - lam) * x.flip(0), y, y.flip(0), lam
    return augment


def train_model(model, groups, data, order, steps, label_smoothing=0.0, tail=0.1, augment=None):
    """AdamW (wd 0) over the given batches with a per-step cosine schedule from each group's lr to 0; `augment`
    (from `augmentation`) makes each step's loss that of the mixed batch against both its labels. Returns the
    per-step train losses, the final train loss (mean of the last `tail` fraction of steps), test loss and error."""
    x, y, losses = data["x_train"], data["y_train"], []

    def loss_fn(m, idx):
        if augment is None:
            return F.cross_entropy(m(x[idx]), y[idx], label_smoothing=label_smoothing)
        xb, ya, yb, lam = augment(x[idx], y[idx])
        logits = m(xb)
        return (lam * F.cross_entropy(logits, ya, label_smoothing=label_smoothing)
                + (1 - lam) * F.cross_entropy(logits, yb, label_smoothing=label_smoothing))

    fit(model, (idx.to(x.device) for idx in order), steps=steps, loss_fn=loss_fn,
        make_optimizer=lambda m: torch.optim.AdamW(groups, weight_decay=0.0),
        lr_policy=lambda lr, step: cosine_lr(lr, step, steps), on_step=lambda step, loss: losses.append(loss.item()))
    last = max(1, round(tail * steps))
    with torch.no_grad():  # in chunks of 1,000 images (all 60,000 CIFAR images at once need tens of GiB at width 16,384)
        logits = chunked(model, data["x_test"], 1000, "test_logits")
        test_loss = F.cross_entropy(logits, data["y_test"]).item()
        test_err = (logits.argmax(-1) != data["y_test"]).float().mean().item()
        train_logits = chunked(model, data["x_train"], 1000, "train_logits")
        train_err = (train_logits.argmax(-1) != data["y_train"]).float().mean().item()
    return {"losses": losses, "train_loss": sum(losses[-last:]) / last, "final_train_error": train_err,
            "test_loss": test_loss, "test_error": test_err}
