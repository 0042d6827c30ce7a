"""Training loop over in-memory tensors, able to train many small models in one run.

Each model has a Run: a seed (which, with the builder seeding init, fixes data order and noise), its Gaussian
input-noise std and its weight decay. Models with the same seed share one data stream: the same batches and the
same noise draws (scaled by each model's std), so a grid over noise, weight decay or width costs one stream per
seed, while each model's numbers stay those of training it alone (to float tolerance: models on the same
inputs share their first-layer matmul). AdamW (decoupled weight decay, one
parameter group per model) with a cosine schedule stepped per epoch, as the paper's code does; the steps are
shared.train.loop.fit's, and the `2*seed` / `2*seed+1` order and noise streams stay (hashing them with run.seed
would change every number trained on this loop).
"""
import time
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from shared.io.runtime import generator
from shared.train.loop import epoch_batches, epochwise, fit
from shared.train.progress import Progress
from shared.train.schedules import cosine_lr


@dataclass(frozen=True)
class Run:
    name: str
    seed: int
    noise_std: float = 0.0
    weight_decay: float = 0.0


@dataclass(frozen=True)
class EpochSchedule:
    epochs: int
    batch_size: int
    lr: float = 1e-3
    betas: tuple = (0.9, 0.999)
    eps: float = 1e-8
    eval_every: int = 1  # test metrics every n epochs; the last epoch is always evaluated
    progress: bool = True



def order_seed(seed):
    return 2 * seed


def noise_seed(seed):
    return 2 * seed + 1


def train(models, runs, data, schedule, device, label=None):
    """Train `models` (dict name -> nn.Module) in place; return {name: [per-epoch metrics]}.
    Progress (shared.train.progress) is shown under `label` (default: "train N runs").

    `data` holds float tensors x_train (N, D), x_test and int64 y_train, y_test. Batches drop the remainder
    (as `drop_last=True`); the test set is evaluated clean.
    """
    names = [r.name for r in runs]
    if sorted(names) != sorted(models):
        raise ValueError(f"runs {sorted(names)} do not match models {sorted(models)}")
    x_train, y_train = data["x_train"].to(device), data["y_train"].to(device)
    x_test, y_test = data["x_test"].to(device), data["y_test"].to(device)
    n = x_train.shape[0]
    per_epoch = n // schedule.batch_size
    if per_epoch == 0:
        raise ValueError(f"batch_size {schedule.batch_size} exceeds the {n} training samples")

    streams = {}  # seed -> runs sharing its batches and noise
    for run in runs:
        streams.setdefault(run.seed, []).append(run)
    orders = {s: epoch_batches(n, schedule.batch_size, generator(order_seed(s)), device) for s in streams}
    noise_gens = {s: generator(noise_seed(s), device) for s in streams}

    def batches():  # every seed's next batch (its epoch's permutation is drawn on CPU: the same on every device)
        while True:
            yield {s: next(order) for s, order in orders.items()}

    loss_sum = {name: torch.zeros((), device=device) for name in names}
    correct = {name: torch.zeros((), device=device) for name in names}

    def loss_fn(models, idx_by_seed):  # the summed loss of all models; tallies each one's loss and accuracy
        total = 0.0
        for seed, members in streams.items():
            idx = idx_by_seed[seed]
            xb, yb = x_train.index_select(0, idx), y_train.index_select(0, idx)
            noise = None
            if any(r.noise_std > 0 for r in members):
                noise = torch.randn(xb.shape, generator=noise_gens[seed], device=device, dtype=xb.dtype)
            for std, group in _by_noise(members).items():
                inputs = xb if std == 0 else torch.add(xb, noise, alpha=std)
                for run, logits in zip(group, _forward_group([models[r.name] for r in group], inputs)):
                    loss = F.cross_entropy(logits, yb)
                    total = total + loss
                    loss_sum[run.name] += loss.detach()
                    correct[run.name] += (logits.detach().argmax(-1) == yb).sum()
        return total

    history = {name: [] for name in names}
    bar = Progress(schedule.epochs, label or f"train {len(runs)} runs", unit="epoch", enabled=schedule.progress)
    steps = (step for epoch in bar for step in range(epoch * per_epoch, (epoch + 1) * per_epoch))
    clock = [time.perf_counter()]

    def end_of_epoch(step, _):
        if (step + 1) % per_epoch:
            return
        if device.type == "cuda":
            torch.cuda.synchronize(device)  # kernels run asynchronously: time the work, not its launch
        epoch_s = time.perf_counter() - clock[0]
        epoch = step // per_epoch
        last = epoch == schedule.epochs - 1
        evaluate_now = last or (epoch + 1) % schedule.eval_every == 0
        test = {name: evaluate(models[name], x_test, y_test) for name in names} if evaluate_now else {}
        for name in names:
            row = {
                "epoch": epoch + 1,
                "lr": cosine_lr(schedule.lr, epoch, schedule.epochs),
                "train_loss": loss_sum[name].item() / per_epoch,
                "train_acc": correct[name].item() / (per_epoch * schedule.batch_size),
                "epoch_seconds": epoch_s,
            }
            if name in test:
                row["test_loss"], row["test_acc"] = test[name]
            history[name].append(row)
            loss_sum[name].zero_()
            correct[name].zero_()
        bar.set_loss(sum(h[-1]["train_loss"] for h in history.values()) / len(names))
        clock[0] = time.perf_counter()

    for m in models.values():
        m.to(device).train()
    fit(models, batches(), steps=schedule.epochs * per_epoch, loss_fn=loss_fn,
        make_optimizer=lambda models: torch.optim.AdamW(
            [{"params": list(models[r.name].parameters()), "weight_decay": r.weight_decay} for r in runs],
            lr=schedule.lr, betas=schedule.betas, eps=schedule.eps),
        lr_policy=epochwise(cosine_lr, per_epoch, schedule.epochs), on_step=end_of_epoch, progress=steps)
    return history


def _by_noise(members):
    groups = {}
    for run in members:
        groups.setdefault(run.noise_std, []).append(run)
    return groups


def _forward_group(models, inputs):
    """Logits of several models on the same inputs.

    Models that expose `input_layer` (a bias-free nn.Linear) and `forward_from_input_layer` share one matmul for
    their first layer: thin layers of small models are slow one at a time, and the first layer does most of the
    work. Same maths as calling each model; the floats may differ in the last bits (another matmul blocking).
    """
    if len(models) > 1 and all(hasattr(m, "forward_from_input_layer") for m in models):
        weights = [m.input_layer.weight for m in models]
        z = inputs @ torch.cat(weights).T
        return [m.forward_from_input_layer(part) for m, part in zip(models, z.split([w.shape[0] for w in weights], -1))]
    return [m(inputs) for m in models]


@torch.no_grad()
def evaluate(model, x, y, chunk=8192):
    """Clean (noise-free) loss and accuracy, in chunks so a large test set fits in memory."""
    was_training = model.training
    model.eval()
    loss, correct = 0.0, 0
    for i in range(0, len(x), chunk):
        logits = model(x[i : i + chunk])
        loss += F.cross_entropy(logits, y[i : i + chunk], reduction="sum").item()
        correct += (logits.argmax(-1) == y[i : i + chunk]).sum().item()
    model.train(was_training)
    return loss / len(x), correct / len(x)
