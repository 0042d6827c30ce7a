"""What this paper's scripts share: the experiments' run specs, the prepared data as tensors, the trained pairs, the
midpoint barriers of dossier 2.1 (whole model and one layer group at a time, both directions), and the scoring over
seed pairs.

Barrier (dossier 2.1, the official code's definition): B = L(theta_mid) - (L(theta_A) + L(theta_B)) / 2, with
theta_mid the midpoint of the whole model, or A (B) with one layer group S averaged ("into A" / "into B"); the
reference is the mean of the two FULL models, not of the one-layer path's own endpoints. Computed for the loss
(nats) and the error (percentage points, 100 - accuracy), on the training and the test split.
"""
import math

import numpy as np
import torch
import torch.nn.functional as F

from shared.data.images import load_images
from shared.io.smoke import capped
from shared.nn.interpolation import barrier, copy_state, interpolate, layer_groups

MEASURES = ("train_loss", "train_err", "test_loss", "test_err")
DIRECTIONS = ("a", "b")  # "into A": A with the group averaged; "into B": B with the group averaged
CIFAR_MEAN, CIFAR_STD = (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)


def experiment_spec(cfg, name):
    """One experiment's settings: its own keys with its `train` overrides merged over the tier's `train`."""
    spec = dict(cfg["experiments"][name])
    spec["train"] = {**cfg["train"], **spec.get("train", {})}
    return spec


def run_specs(cfg, name, d_input, n_classes):
    """The run spec of models A and B of every seed pair k at every saved epoch (run `p<k>_<a|b>_e<epoch>`).
    Different inits: A from seed a, B from seed b; a shared init: both from seed a. The data order always follows
    the run's own seed (a or b)."""
    spec = experiment_spec(cfg, name)
    epochs = spec["train"]["epochs"]
    saved = sorted(set(spec.get("checkpoints", [])) | {epochs})
    out = []
    for pair, seeds in enumerate(cfg["seeds"]):
        for role in DIRECTIONS:
            order_seed = seeds[role]
            init_seed = seeds["a"] if spec["shared_init"] else order_seed
            for epoch in saved:
                out.append({"name": f"p{pair}_{role}_e{epoch}", "pair": pair, "role": role, "epoch": epoch,
                            "seed": init_seed, "order_seed": order_seed, "model": spec["model"],
                            "depth": spec.get("depth", 0), "width": cfg["width"], "d_input": d_input,
                            "n_classes": n_classes})
    return out


def load_data(path, dataset):
    """Prepared registry file -> float32 tensors. MNIST: pixels in [0, 1] (N, 784). CIFAR-10: (N, 3, 32, 32),
    normalised per channel (as the official code's transforms)."""
    if dataset == "cifar10":
        return load_images(path, layout="chw", normalise="per_channel", mean=CIFAR_MEAN, std=CIFAR_STD)
    return load_images(path, layout="flat")


def pairs_of(specs):
    """The seed pairs a checkpoint holds: [0, 1, ...]."""
    return sorted({s["pair"] for s in specs.values()})


def states_at(models, specs, epoch=None, pair=0):
    """(state A, state B) of one seed pair at `epoch` (default: the last saved), as plain float tensors."""
    epoch = max(s["epoch"] for s in specs.values()) if epoch is None else epoch
    return tuple(copy_state(models[f"p{pair}_{r}_e{epoch}"]) for r in DIRECTIONS)


def over_pairs(per_pair, worst=None):
    """One metrics dict from one per seed pair: the mean over pairs, or, for a key of `worst` ({key: min or max}: a
    metric that is already the worst case over depths, layers or checkpoints), the worst pair. NaN stays NaN."""
    worst = worst or {}

    def one(key):
        values = [m[key] for m in per_pair]
        if any(math.isnan(v) for v in values):
            return float("nan")
        return worst[key](values) if key in worst else float(np.mean(values))

    return {key: one(key) for key in per_pair[0]}


class Evaluator:
    """Loss (nats) and error (%) of a model loaded with a given state, on the training split (its first
    `train_max` images when > 0) and the test split, in chunks, without gradients."""

    def __init__(self, model, data, device, train_max=0, chunk=4096):
        self.model, self.device, self.chunk = model.to(device).eval(), device, chunk
        n = len(data["x_train"]) if not train_max else min(train_max, len(data["x_train"]))
        self.splits = {"train": (data["x_train"][:n].to(device), data["y_train"][:n].to(device)),
                       "test": (data["x_test"].to(device), data["y_test"].to(device))}
        self.calls = 0

    @torch.no_grad()
    def __call__(self, state):
        self.calls += 1
        self.model.load_state_dict(state)
        out = {}
        for split, (x, y) in self.splits.items():
            loss, wrong = 0.0, 0
            starts = range(0, len(x), self.chunk)
            for i in capped(starts, len(starts), f"evaluate_{split}", count_flops=False):  # smoke: 3 chunks
                logits = self.model(x[i: i + self.chunk]).double()
                loss += F.cross_entropy(logits, y[i: i + self.chunk], reduction="sum").item()
                wrong += (logits.argmax(-1) != y[i: i + self.chunk]).sum().item()
            out[f"{split}_loss"], out[f"{split}_err"] = loss / len(x), 100.0 * wrong / len(x)
        return out


def reference(ev_a, ev_b):
    return {m: (ev_a[m] + ev_b[m]) / 2 for m in MEASURES}


def barriers_of(point, ref):
    """{measure: midpoint barrier} of one evaluated midpoint against the full models' mean (dossier 2.1)."""
    return {m: barrier([point[m]], [0.5], reference=ref[m]) for m in MEASURES}


def barrier_table(evaluate, state_a, state_b):
    """Endpoints, the whole-model midpoint barrier and every single layer group's, both directions.

    Returns {"groups": [names], "ends": {a, b}, "full": {measure: B}, "layer": {(group, direction): {measure: B}}}."""
    ends = {"a": evaluate(state_a), "b": evaluate(state_b)}
    ref = reference(ends["a"], ends["b"])
    groups = layer_groups(state_a)
    table = {"groups": list(groups), "ends": ends, "ref": ref,
             "full": barriers_of(evaluate(interpolate(state_a, state_b, 0.5)), ref), "layer": {}}
    for group, keys in groups.items():
        for direction in DIRECTIONS:
            point = evaluate(interpolate(state_a, state_b, 0.5, keys, base=direction))
            table["layer"][(group, direction)] = barriers_of(point, ref)
    return table


def max_single(table, measure="train_loss"):
    return max(v[measure] for v in table["layer"].values())


def max_abs_single(table, measure="train_loss"):
    return max(abs(v[measure]) for v in table["layer"].values())


def ratio(num, den):
    """num / den, NaN (a failed metric) when den is 0: a pair without any barrier has no share to speak of."""
    return num / den if den != 0 else float("nan")
