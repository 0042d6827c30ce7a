"""The models of monet: a small MONet and its ablations (token grids), and flat classifiers of equal parameters.

    group monet (shared.nn.polynomial.MONet): variant mu (the official block: Poly-blocks with LayerNorm and the
        spatial shift), linear (the Hadamard product and the LayerNorms removed: a linear map of the pixels), gelu (C gelu(A x) instead of each Mu-layer, widened to
        its parameters), noshift (no spatial shift), nonorm (no LayerNorm anywhere: a polynomial of the pixels)
    group flat, on the flattened image: relu (Linear, ReLU, Linear), bilinear (shared.nn.bilinear.Bilinear, then a
        linear head), mu (one Mu-layer C[(A x) * (B D x) + A x]), mu_noshortcut (without + A x), linear (the mu
        layer without its product: C A x)
A spec holds the widths (chosen in common.py to match the MONet's parameters), so a checkpoint rebuilds alone.
"""
from torch import nn

from shared.nn.bilinear import Bilinear
from shared.nn.polynomial import MONet, MuLayer

MONET_VARIANTS = {"mu": {}, "linear": {"mix": "linear", "norm": False}, "gelu": {"mix": "gelu"}, "noshift": {"shift": False},
                  "nonorm": {"norm": False}}
FLAT_KINDS = ("relu", "bilinear", "mu", "mu_noshortcut", "linear")


def build(spec):
    """A model from a run spec (common.specs); the caller seeds torch first, so the init is fixed by the seed."""
    d, classes = spec["d_input"], spec["n_classes"]
    kind = spec["kind"]
    if spec["group"] == "monet":
        return MONet(spec["image_shape"], classes, spec["dims"], spec["depths"], spec["expansion"],
                     spec["rank_ratio"], stem_convs=spec["stem_convs"], **MONET_VARIANTS[kind])
    h = spec["hidden"]
    if kind == "relu":
        return nn.Sequential(nn.Linear(d, h), nn.ReLU(), nn.Linear(h, classes))
    if kind == "bilinear":
        return nn.Sequential(Bilinear(d, h, bias=True), nn.Linear(h, classes))
    mix = "linear" if kind == "linear" else "product"
    return MuLayer(d, classes, h, spec["rank"], mix=mix, shortcut=kind != "mu_noshortcut")


def n_params(model):
    return sum(p.numel() for p in model.parameters())
