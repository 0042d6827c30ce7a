"""What this paper's scripts share: the toy tasks, the run specs of both experiments, the image data and the image
training (SGD with momentum, one learning rate for W_r and the rest, ReLinear's for the quadratic terms)."""
import math
from itertools import pairwise

import torch
import torch.nn.functional as F

from shared.data import images
from shared.data.augment import crop_flip
from shared.io.smoke import capped
from shared.nn.quadratic_neuron import quadratic_param_groups
from shared.train.loop import epoch_batches, fit

# ---------------------------------------------------------------- toy tasks (expressivity)

CLASSIFY, REGRESS = ("xor", "disk"), ("product", "radial")
DISK_CENTRE, DISK_RADIUS = (0.2, -0.1), 0.6


def toy_data(task, n, dim, generator):
    """(x, y) of a toy task, float64 on the CPU. xor: the four points (+-1, +-1), label x1 x2 > 0; disk: uniform in
    [-1, 1]^2, label inside the disk; product: y = x1 x2 on [-1, 1]^2; radial: y = ||x||^2 on [-1, 1]^dim."""
    if task == "xor":
        x = torch.tensor([[-1.0, -1.0], [-1.0, 1.0], [1.0, -1.0], [1.0, 1.0]], dtype=torch.float64)
        return x, (x[:, 0] * x[:, 1] > 0).double()
    d = dim if task == "radial" else 2
    x = torch.rand(n, d, generator=generator, dtype=torch.float64) * 2 - 1
    if task == "disk":
        return x, ((x - torch.tensor(DISK_CENTRE, dtype=torch.float64)).norm(dim=1) < DISK_RADIUS).double()
    return x, x[:, 0] * x[:, 1] if task == "product" else x.pow(2).sum(1)


def net_params(d_in, hidden, d_out, neuron):
    sizes = [d_in, *hidden, d_out]
    per = 3 if neuron == "quadratic" else 1
    return sum(per * (a + 1) * b for a, b in pairwise(sizes))


def matched_width(d_in, budget):
    """The smallest width of a one-hidden-layer conventional ReLU net with at least `budget` parameters."""
    return math.ceil((budget - 1) / (d_in + 2))


def toy_specs(cfg):
    """One spec per toy run: each classification task a single neuron of each kind; each regression task a
    quadratic net of `quadratic_width` against a conventional ReLU net with at least as many parameters."""
    t, out = cfg["toy"], []
    for task in CLASSIFY:
        for neuron in ("quadratic", "conventional"):
            for seed in t["classify"]["seeds"]:
                out.append({"name": f"{task}-{neuron}-seed{seed}", "task": task, "neuron": neuron, "seed": seed,
                            "arch": "net", "d_in": 2, "hidden": [], "d_out": 1, "init": "default"})
    for task in REGRESS:
        d = t["radial_dim"] if task == "radial" else 2
        budget = net_params(d, [t["quadratic_width"]], 1, "quadratic")
        for neuron, width in (("quadratic", t["quadratic_width"]), ("conventional", matched_width(d, budget))):
            for seed in t["regress"]["seeds"]:
                out.append({"name": f"{task}-{neuron}-seed{seed}", "task": task, "neuron": neuron, "seed": seed,
                            "arch": "net", "d_in": d, "hidden": [width], "d_out": 1, "init": "default",
                            "params": net_params(d, [width], 1, neuron)})
    return out


# ---------------------------------------------------------------- image runs (trainability)

ARMS = ("conventional", "relinear", "random")


def image_name(arm, lr, seed, gamma=None):
    return f"{arm}{'' if gamma is None else f'-g{gamma:g}'}-lr{lr:g}-seed{seed}"


def image_specs(cfg):
    """The collapse grid (every arm x lr x seed; ReLinear at `relinear_gamma`) and the gamma sweep (ReLinear at the
    main lr, each gamma x sweep seed), deduplicated by name: conventional, ReLinear (quadratic, referenced to the
    conventional network of its seed, quadratic terms at lr gamma) and random (quadratic, Kaiming-normal r, g, b,
    one lr for all)."""
    e = cfg["images"]
    base = {"arch": e["arch"], "d_in": e["d_input"], "hidden": e["hidden"], "d_out": e["n_classes"],
            "n_classes": e["n_classes"]}
    runs = {}

    def add(arm, lr, seed, gamma=None):
        neuron = "conventional" if arm == "conventional" else "quadratic"
        init = "relinear" if arm == "relinear" else "kaiming"
        name = image_name(arm, lr, seed, gamma)
        runs[name] = {"name": name, "arm": arm, "neuron": neuron, "init": init, "lr": lr, "seed": seed,
                      "gamma": lr if arm == "random" else gamma, **base}

    for seed in e["seeds"]:
        for lr in e["lrs"]:
            add("conventional", lr, seed)
            add("relinear", lr, seed, e["relinear_gamma"])
            add("random", lr, seed)
    for seed in e["sweep"]["seeds"]:
        add("conventional", e["main_lr"], seed)
        for gamma in e["sweep"]["gammas"]:
            add("relinear", e["main_lr"], seed, gamma)
    return list(runs.values())


IMAGENET_MEAN, IMAGENET_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)  # the official code's normalisation


def load_image_data(path, arch):
    """MNIST-5k flat and centred for the MLP; CIFAR-10 as (N, 3, 32, 32) normalised per channel for ResNet20."""
    if arch == "resnet20":
        return images.load_images(path, layout="chw", normalise="per_channel", mean=IMAGENET_MEAN, std=IMAGENET_STD)
    return images.load_images(path, layout="flat", normalise="centre")


class Diverged(Exception):
    """The loss became non-finite: a collapse (training stops there)."""


def step_lr(epochs, steps_per_epoch, milestones):
    """lr / 10 at each milestone (a fraction of the epochs): the official 0.1 -> 0.01 at 100 -> 0.001 at 150 of 200."""
    bounds = [round(m * epochs) * steps_per_epoch for m in milestones]
    return lambda base, step: base * 0.1 ** sum(step >= b for b in bounds)


def train_image_model(model, spec, data, e, generator, device):
    """SGD (momentum 0.9, weight decay on every group, as the official code), cross-entropy, step schedule; the
    quadratic parameters at spec['gamma']. Returns the per-epoch history and whether the loss diverged."""
    x, y = data["x_train"].to(device), data["y_train"].to(device)
    per_epoch = len(x) // e["batch_size"]
    model.to(device).train()
    groups = quadratic_param_groups(model, spec["lr"], spec["gamma"] if spec["neuron"] == "quadratic" else spec["lr"])
    groups = [g for g in groups if g["params"]]
    history, sums = [], {"loss": 0.0}

    def batches():
        for idx in epoch_batches(len(x), e["batch_size"], generator, device):
            xb = x[idx]
            yield (crop_flip(xb, generator) if e["augment"] else xb), y[idx]

    def on_step(step, loss):
        if not torch.isfinite(loss):
            raise Diverged(step)
        sums["loss"] += loss.item()
        if (step + 1) % per_epoch == 0:
            history.append({"epoch": (step + 1) // per_epoch, "train_loss": sums["loss"] / per_epoch})
            sums["loss"] = 0.0

    try:
        fit(model, batches(), steps=e["epochs"] * per_epoch,
            loss_fn=lambda m, b: F.cross_entropy(m(b[0]), b[1]),
            make_optimizer=lambda m: torch.optim.SGD(groups, lr=spec["lr"], momentum=0.9,
                                                     weight_decay=e["weight_decay"]),
            lr_policy=step_lr(e["epochs"], per_epoch, e["milestones"]), on_step=on_step)
    except Diverged as stop:
        return history, int(stop.args[0])
    return history, None


@torch.no_grad()
def accuracy(model, x, y, chunk=256):
    """Test accuracy in chunks (a smoke run evaluates only a few of them: shared.io.smoke.capped)."""
    model.eval()
    starts = range(0, len(x), chunk)
    seen = correct = 0
    for i in capped(starts, len(starts), "evaluate"):
        correct += (model(x[i:i + chunk]).argmax(-1) == y[i:i + chunk]).sum().item()
        seen += len(x[i:i + chunk])
    return correct / seen
