"""What the benchmark's scripts share: the plan (the runs a config expands to), the tasks' data and one training.

The plan iterates shared.nn.layer_registry.families(), so a family registered by a later paper is benchmarked with
no edit here. Each task fixes the model width d; a budget is the dense ReLU block's count at the task's ref_width,
and each family's hidden width is the grid width whose count is closest to it (width_for_budget), once for
parameters and once for multiply-adds. Where a family's two widths coincide (its params equal its MACs) one set of
runs serves both budgets.
"""
import math

import numpy as np
import torch
import torch.nn.functional as F

from shared.data import images, read_prepared
from shared.data.prepare import split_by_class
from shared.nn.layer_registry import count, families, width_for_budget
from shared.train.language_model import fixed_windows, random_windows
from shared.train.loop import epoch_batches, fit
from shared.train.schedules import cosine_lr

REFERENCE = "dense"  # the ReLU MLP block every budget, and every speed, is relative to
LOWER_IS_BETTER = {"image": False, "regression": True, "lm": True}
METRIC = {"image": "test accuracy", "regression": "test MSE / Var(y)", "lm": "test loss (nats/token)"}


def benchmarked(cfg):
    """{family: its hyperparameters} of every registered family the config does not exclude, in registry order."""
    return {name: cfg["hyper"].get(name, {}) for name in families() if name not in cfg["exclude"]}


def budgets(cfg, task):
    """{measure: budget}: the reference block's count at the task's ref_width."""
    t = cfg["tasks"][task]
    return count(REFERENCE, t["d"], t["ref_width"], "block", **cfg["hyper"].get(REFERENCE, {}))


def plan(cfg, task):
    """The task's units: one per (family, width), with the budgets it stands for. Each unit is an lr sweep on the
    first seed, then the chosen lr on the other seeds."""
    t, units = cfg["tasks"][task], []
    for family, hyper in benchmarked(cfg).items():
        widths = {}
        for measure, budget in budgets(cfg, task).items():
            width = width_for_budget(family, budget, cfg["widths"], measure, "block", d=t["d"], **hyper)
            widths.setdefault(width, []).append(measure)
        for width, measures in widths.items():
            units.append({"task": task, "family": family, "width": width, "budgets": measures, "hyper": hyper,
                          **count(family, t["d"], width, "block", **hyper)})
    return units


def spec_of(cfg, task, unit, vocab=None):
    """The build spec (model.build) of one unit."""
    t = cfg["tasks"][task]
    spec = {"kind": t["kind"], "family": unit["family"], "d": t["d"], "width": unit["width"], "hyper": unit["hyper"]}
    if t["kind"] == "lm":
        return {**spec, "vocab": vocab, "n_head": t["n_head"], "n_ctx": t["n_ctx"]}
    return {**spec, "d_out": 1 if t["kind"] == "regression" else t["classes"]}


# --- data: train / validation / test for each task kind ------------------------------------------------------------

def image_data(path, val_fraction):
    """Pixels in [0, 1], flattened; the last val_fraction of each class of the training split (by position) is the
    validation set the lr is chosen on; the test split is scored only."""
    if path.endswith("digits.safetensors"):  # prepare_digits writes (N, 64) floats
        arrays, _ = read_prepared(path, keys=("x_train", "y_train", "x_test", "y_test"))
        data = {k: torch.from_numpy(v) for k, v in arrays.items()}
        data = {k: v.float() if k.startswith("x") else v.long() for k, v in data.items()}
    else:
        data = images.load_images(path, layout="flat")
    split = split_by_class(data["x_train"].numpy(), data["y_train"].numpy(), val_fraction)
    return {"x_train": torch.from_numpy(split["x_train"]), "y_train": torch.from_numpy(split["y_train"]),
            "x_val": torch.from_numpy(split["x_test"]), "y_val": torch.from_numpy(split["y_test"]),
            "x_test": data["x_test"], "y_test": data["y_test"]}


def teacher_data(t):
    """x ~ N(0, I_d); y = a fixed random tanh teacher d -> teacher_width -> 1 (weights N(0, 1/fan_in), drawn from
    data_seed), standardised by the training targets. Splits of n_train, n_val and n_test fresh draws."""
    gen = torch.Generator().manual_seed(t["data_seed"])
    w1 = torch.randn(t["d"], t["teacher_width"], generator=gen) / math.sqrt(t["d"])
    w2 = torch.randn(t["teacher_width"], 1, generator=gen) / math.sqrt(t["teacher_width"])
    sizes = {"train": t["n_train"], "val": t["n_val"], "test": t["n_test"]}
    xs = {split: torch.randn(n, t["d"], generator=gen) for split, n in sizes.items()}
    ys = {split: torch.tanh(x @ w1) @ w2 for split, x in xs.items()}
    mean, std = ys["train"].mean(), ys["train"].std()
    return {**{f"x_{s}": x for s, x in xs.items()}, **{f"y_{s}": (y - mean) / std for s, y in ys.items()}}


def story_data(path, t):
    """Token streams: train windows are drawn at random offsets of the train stream; the validation stream's first
    half gives the validation windows (lr choice), its second half the test windows."""
    arrays, meta = read_prepared(path, keys=("train_tokens", "val_tokens"))
    val = torch.from_numpy(arrays["val_tokens"].astype(np.int64))
    half = len(val) // 2
    return {"train": torch.from_numpy(arrays["train_tokens"].astype(np.int64)),
            "val": fixed_windows(val[:half], t["eval_windows"], t["n_ctx"] + 1),
            "test": fixed_windows(val[half:], t["eval_windows"], t["n_ctx"] + 1),
            "vocab": int(max(arrays["train_tokens"].max(), arrays["val_tokens"].max())) + 1}


# --- one training run, and its scores -------------------------------------------------------------------------------

def loss_of(kind, model, x, y=None):
    if kind == "lm":
        return model.loss(x)
    if kind == "regression":
        return F.mse_loss(model(x), y)
    return F.cross_entropy(model(x), y)


@torch.no_grad()
def score(kind, model, data, split, chunk=1024):
    """(loss, the task's metric) on a split: accuracy for images; MSE / Var(y) for regression (targets are
    standardised, so this is the MSE); the loss in nats per token for the LM."""
    model.eval()
    if kind == "lm":
        windows = data[split]
        loss = sum(model.loss(windows[i:i + chunk]).item() * len(windows[i:i + chunk])
                   for i in range(0, len(windows), chunk)) / len(windows)
        model.train()
        return loss, loss
    x, y = data[f"x_{split}"], data[f"y_{split}"]
    out = torch.cat([model(x[i:i + chunk]) for i in range(0, len(x), chunk)])
    model.train()
    if kind == "regression":
        loss = F.mse_loss(out, y).item()
        return loss, loss
    return F.cross_entropy(out, y).item(), (out.argmax(-1) == y).float().mean().item()


def train_one(kind, model, data, t, lr, order_gen):
    """AdamW (weight decay t['weight_decay']) with a per-step cosine to 0, through shared.train.loop.fit: the LM on
    t['steps'] random windows, the others on t['epochs'] epochs of permuted batches (last partial batch dropped)."""
    if kind == "lm":
        steps = t["steps"]
        batches = (random_windows(data["train"], t["batch_size"], t["n_ctx"] + 1, order_gen) for _ in range(steps))
        loss_fn = lambda m, windows: m.loss(windows)  # noqa: E731
    else:
        n = len(data["x_train"])
        steps = t["epochs"] * (n // t["batch_size"])
        batches = epoch_batches(n, t["batch_size"], order_gen)
        loss_fn = lambda m, idx: loss_of(kind, m, data["x_train"][idx], data["y_train"][idx])  # noqa: E731
    fit(model, batches, steps=steps, loss_fn=loss_fn,
        make_optimizer=lambda m: torch.optim.AdamW(m.parameters(), lr=lr, weight_decay=t["weight_decay"]),
        lr_policy=lambda base, step: cosine_lr(base, step, steps))
    return model


def timing_input(kind, t, batch, vocab):
    """A fixed batch for the throughput timings: random inputs of the task's shape (the LM: random tokens)."""
    gen = torch.Generator().manual_seed(0)
    if kind == "lm":
        return torch.randint(vocab, (batch, t["n_ctx"] + 1), generator=gen)
    return torch.randn(batch, t["d"], generator=gen)
