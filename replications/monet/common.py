"""What this paper's scripts share: the prepared images as flat tensors, and the run specs of each group with the
flat models' widths matched to the MONet's parameters."""
import torch

from shared.data import images
from shared.io.smoke import cap
from shared.nn.polynomial import mu_params

from .model import build, n_params

GROUPS = ("monet", "flat")


SMOKE_TEST_IMAGES = 512  # a smoke run (shared.io.smoke) evaluates on these first test images only: its numbers are
# not scored, and 10,000 CIFAR images through 15 MONets on a CPU would dwarf its capped training


def load_data(path):
    """Prepared dataset -> float32 flat pixels in [0, 1], channels first (the MONet reshapes them), centred by the
    training mean; int64 labels."""
    data = images.load_images(path, layout="flat", normalise="centre")
    if cap() is not None:
        data["x_test"], data["y_test"] = data["x_test"][:SMOKE_TEST_IMAGES], data["y_test"][:SMOKE_TEST_IMAGES]
    return data


def monet_budget(p):
    """The parameter count of the MONet (variant mu): the budget every flat model is matched to."""
    with torch.device("meta"):
        return n_params(build(monet_spec(p, "mu", 0)))


def monet_spec(p, kind, seed):
    m = p["monet"]
    return {"name": f"{kind}_seed{seed}", "group": "monet", "kind": kind, "seed": seed, "d_input": p["d_input"],
            "n_classes": p["n_classes"], "image_shape": p["image_shape"],
            **{k: m[k] for k in ("dims", "depths", "expansion", "rank_ratio", "stem_convs")}}


def flat_params(kind, hidden, rank, d, classes):
    if kind == "relu":
        return hidden * (d + 1) + classes * (hidden + 1)
    if kind == "bilinear":
        return 2 * hidden * (d + 1) + classes * (hidden + 1)
    return mu_params(d, classes, hidden, rank)  # mu; mu_noshortcut and linear take mu's widths


def flat_widths(p, budget):
    """{kind: (hidden, rank)}: the width whose parameters come closest to `budget` (rank = hidden // rank_ratio);
    mu_noshortcut and linear keep mu's widths (ablations of the same layer)."""
    d, classes, ratio = p["d_input"], p["n_classes"], p["flat"]["rank_ratio"]
    out = {}
    for kind in ("relu", "bilinear", "mu"):
        hidden = min(range(ratio, 4096), key=lambda h: abs(flat_params(kind, h, h // ratio, d, classes) - budget))
        out[kind] = (hidden, hidden // ratio)
    out["mu_noshortcut"] = out["linear"] = out["mu"]
    return out


def specs(p, group):
    """One spec per model of a group and seed."""
    if group == "monet":
        return [monet_spec(p, kind, seed) for seed in p["seeds"] for kind in p["monet"]["variants"]]
    widths = flat_widths(p, monet_budget(p))
    return [{"name": f"{kind}_seed{seed}", "group": "flat", "kind": kind, "seed": seed, "d_input": p["d_input"],
             "n_classes": p["n_classes"], "hidden": widths[kind][0], "rank": widths[kind][1]}
            for seed in p["seeds"] for kind in p["flat"]["kinds"]]

