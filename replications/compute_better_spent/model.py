"""The paper's MLP (Qiu et al. 2024, section 4 / dossier 6a): a dense input layer 784 -> w, `depth` pre-LN residual
blocks x + W2 GELU(W1 LN(x)) with W1: w -> 4w and W2: 4w -> w the structured layers (shared.nn.structured), a final
LN and a dense zero-initialised head. Every weight factor is initialised and given its learning rate through
shared.nn.parametrization (spectral muP per factor)."""
import math

import torch
from torch import nn
from torch.nn import functional as F

from shared.nn.parametrization import factor_table, initialize
from shared.nn.structured import build as build_layer

EXPANSION = 4


def options(structure, width, spec):
    """The structure's keyword options at this width: low-rank r = ceil(sqrt(w)) of the smaller side (the paper's
    default rank_frac=0), BTT rank, Monarch blocks."""
    if structure == "low_rank":
        return {"rank": math.ceil(math.sqrt(width))}
    if structure == "btt":
        return {"rank": spec.get("btt_rank", 1)}
    if structure == "monarch":
        return {"blocks": spec.get("monarch_blocks", 4)}
    return {}


class StructuredMLP(nn.Module):
    def __init__(self, structure, width, d_input, n_classes, depth=1, **spec):
        super().__init__()
        self.structure, self.width, self.depth = structure, width, depth
        self.input = build_layer("dense", d_input, width)
        opts = options(structure, width, spec)
        self.up = nn.ModuleList([build_layer(structure, width, EXPANSION * width, **opts) for _ in range(depth)])
        self.down = nn.ModuleList([build_layer(structure, EXPANSION * width, width, **opts) for _ in range(depth)])
        self.head = build_layer("dense", width, n_classes)

    def layers(self):
        """{name: layer} of every weight, in the order the parametrisation table lists them."""
        named = {"input": self.input}
        for i in range(self.depth):
            named[f"up{i}"], named[f"down{i}"] = self.up[i], self.down[i]
        named["head"] = self.head
        return named

    def hidden_macs(self):
        """Forward multiply-adds per example of the structured (hidden) layers: the compute axis."""
        return sum(layer.macs() for pair in (self.up, self.down) for layer in pair)

    def total_macs(self):
        return self.hidden_macs() + self.input.macs() + self.head.macs()

    def forward(self, x):
        h = self.input(x)
        for up, down in zip(self.up, self.down):
            h = h + down(F.gelu(up(F.layer_norm(h, (self.width,)))))
        return self.head(F.layer_norm(h, (self.width,)))


def table(model, arm):
    """Parametrisation rows: arm 'aware' = muP per factor / k (split_by_factors), 'naive' = the dense layer's
    multiplier for every factor (per_layer, the paper's use_wrong_mult)."""
    if arm not in ("aware", "naive"):
        raise ValueError(f"arm {arm!r}: 'aware' or 'naive'")
    return factor_table(model.layers(), "mup", "adam", per_layer=arm == "naive", split_by_factors=arm == "aware")


def zero_names(model):
    """The head and the last factor of each residual output layer start at zero (the paper's code)."""
    names = {"head.weight"}
    for i, layer in enumerate(model.down):
        names.add(f"down{i}.{layer.factors()[-1][0]}")
    return names


def build(spec, arm="aware", generator=None):
    """One model from a run spec (structure, width, d_input, n_classes, depth, options), initialised."""
    keys = {k: v for k, v in spec.items() if k not in ("structure", "width", "d_input", "n_classes", "depth")}
    model = StructuredMLP(spec["structure"], spec["width"], spec["d_input"], spec["n_classes"],
                          spec.get("depth", 1), **keys)
    rows = table(model, arm)
    initialize(rows, generator, zero=zero_names(model))
    return model, rows


def dense_base_multipliers(spec, base_width):
    """lr multiplier of each layer's dense equivalent at the base width (input, up_i, down_i, head): the reference
    the paper's lr is relative to (lr_f = lr_base * mult_f / mult_dense_at_base)."""
    with torch.device("meta"):
        dense = StructuredMLP("dense", base_width, spec["d_input"], spec["n_classes"], spec.get("depth", 1))
    return {row["name"].split(".")[0]: row["lr_mult"] for row in table(dense, "aware")}
