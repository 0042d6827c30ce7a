"""What this paper's scripts share: the toy square wave, the run specs, the official optimiser and schedule
(Adam, a piecewise-linear learning rate per step: 0 -> lr at 2/5 of training -> lr / 20 at 4/5 -> 0), one training
function for every model, and the certified and attacked accuracies."""
import math

import numpy as np
import torch
import torch.nn.functional as F

from shared.data import images
from shared.io.smoke import capped
from shared.nn.adversarial import pgd_l2
from shared.train.loop import epoch_batches, fit

# ---------------------------------------------------------------- toy square wave (the paper's Tab. 1 / Fig. 3)

TOY_RANGE = (-2.0, 2.0)


def square_wave(x):
    """The official toy target: 1 on (-inf, -1] and (0, 1], else 0."""
    return ((x <= -1) | ((x > 0) & (x <= 1))).to(x.dtype)


def toy_data(n_train, n_test, generator):
    """(x_train, y_train, x_test, y_test), (N, 1) each: uniform random training points, an evenly spaced test grid."""
    lo, hi = TOY_RANGE
    x_train = lo + (hi - lo) * torch.rand(n_train, 1, generator=generator)
    x_test = torch.linspace(lo, hi, n_test)[:, None]
    return x_train, square_wave(x_train), x_test, square_wave(x_test)


def toy_specs(t):
    """Each seed: a sandwich and an orthogonal network at every gamma, and one plain ReLU MLP (no bound)."""
    out = []
    for seed in t["seeds"]:
        for gamma in t["gammas"]:
            for kind in ("sandwich", "orthogonal"):
                out.append({"name": f"{kind}-g{gamma:g}-seed{seed}", "kind": kind, "gamma": gamma, "seed": seed,
                            "d_in": 1, "widths": [t["widths"][kind]] * t["depth"], "d_out": 1})
        out.append({"name": f"plain-seed{seed}", "kind": "plain", "gamma": None, "seed": seed, "d_in": 1,
                    "widths": [t["widths"]["plain"]] * t["depth"], "d_out": 1})
    return out


# ---------------------------------------------------------------- image classifiers

def image_specs(e):
    out = []
    for seed in e["seeds"]:
        for gamma in e["gammas"]:
            for kind in e["kinds"]:
                out.append({"name": f"{kind}-g{gamma:g}-seed{seed}", "kind": kind, "gamma": gamma, "seed": seed,
                            "d_in": e["d_input"], "widths": e["hidden"], "d_out": e["n_classes"]})
        out.append({"name": f"plain-seed{seed}", "kind": "plain", "gamma": None, "seed": seed,
                    "d_in": e["d_input"], "widths": e["hidden"], "d_out": e["n_classes"]})
    return out


def load_image_data(path):
    """Flat images, pixels in [0, 1] (the l2 radii are on this scale)."""
    return images.load_images(path, layout="flat")


# ---------------------------------------------------------------- training

def triangle_lr(steps):
    """The official schedule, per step: linear 0 -> base at 2/5, -> base / 20 at 4/5, -> 0 at the end."""
    points = ([0, 2 * steps / 5, 4 * steps / 5, steps], [0.0, 1.0, 0.05, 0.0])
    return lambda base, step: base * float(np.interp(step + 1, *points))


def train(model, x, y, loss_fn, epochs, batch_size, lr, generator, device="cpu"):
    """Adam (weight decay 0) with the triangle schedule over epochs x (len(x) // batch_size) steps on `device`;
    returns the mean loss of each epoch. The batches are drawn on the CPU (the same order on every device)."""
    per_epoch = len(x) // batch_size
    steps = epochs * per_epoch
    x, y = x.to(device), y.to(device)
    model.to(device).train()
    history, total = [], [0.0]

    def on_step(step, loss):
        total[0] += loss.item()
        if (step + 1) % per_epoch == 0:
            history.append(total[0] / per_epoch)
            total[0] = 0.0

    batches = ((x[i], y[i]) for i in epoch_batches(len(x), batch_size, generator, device))
    fit(model, batches, steps=steps, loss_fn=lambda m, b: loss_fn(m(b[0]), b[1]),
        make_optimizer=lambda m: torch.optim.Adam(m.parameters(), lr=lr), lr_policy=triangle_lr(steps),
        on_step=on_step)
    return history


def offset_cross_entropy(offset, temperature):
    """The official loss of its certified-accuracy runs: cross-entropy of (logits - offset at the true class) /
    temperature, which keeps pushing the true logit until it leads by about `offset`."""
    return lambda out, y: F.cross_entropy((out - offset * F.one_hot(y, out.shape[1])) / temperature, y)


# ---------------------------------------------------------------- evaluation

def margins(logits, y):
    """Logit of the true class minus the largest other logit (negative: misclassified)."""
    true = logits.gather(1, y[:, None])[:, 0]
    other = logits.scatter(1, y[:, None], -math.inf).max(1).values
    return true - other


def certified(margin, lipschitz, eps):
    """The margin rule: a gamma-Lipschitz (l2) classifier keeps its label within radius eps where the margin
    exceeds sqrt(2) gamma eps (each of two logits can move by at most gamma eps along the worst direction)."""
    return margin > math.sqrt(2) * lipschitz * eps


def chunked(x, chunk):
    starts = range(0, len(x), chunk)
    return capped(starts, len(starts), "evaluate", count_flops=False)


def evaluate(model, x, y, eps_list, pgd_steps, lipschitz, chunk=500):
    """Per test point: the margin, whether it is certified at each eps for a `lipschitz`-Lipschitz network, and
    whether a PGD l2 attack at each eps leaves it correct. Points a smoke run leaves out are dropped."""
    model.eval()
    rows = {"margin": [], **{f"cert_{e:g}": [] for e in eps_list}, **{f"pgd_{e:g}": [] for e in eps_list}}
    for i in chunked(x, chunk):
        xb, yb = x[i:i + chunk], y[i:i + chunk]
        with torch.no_grad():
            m = margins(model(xb), yb)
        rows["margin"].append(m)
        for eps in eps_list:
            rows[f"cert_{eps:g}"].append(certified(m, lipschitz, eps))
            adv = pgd_l2(model, xb, yb, eps, pgd_steps)
            with torch.no_grad():
                rows[f"pgd_{eps:g}"].append(model(adv).argmax(1) == yb)
    return {k: torch.cat(v) for k, v in rows.items()}
