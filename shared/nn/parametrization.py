"""Width parametrisations as one table: the init scale and learning-rate multiplier of every weight factor follow
from its fan-in and fan-out (Yang, Simon & Bernstein's spectral form of muP; SP and NTP written the same way).

For a factor mapping fan_in -> fan_out (batch axes excluded, so a BTT core or a Monarch block counts as the small
dense map it applies):

  scheme  init std                                      SGD lr multiplier      Adam lr multiplier
  sp      1 / sqrt(fan_in)                              1                      1
  ntp     1 / sqrt(fan_in)                              1 / fan_in             1 / sqrt(fan_in)
  mup     1 / sqrt(fan_in) * min(1, sqrt(fan_out/fan_in))  fan_out / fan_in    1 / fan_in

NTP is written in "SP form": weights w = v / sqrt(fan_in) with v ~ N(0, 1) trained at lr eta become w trained at
eta / fan_in (SGD) or eta / sqrt(fan_in) (Adam, whose step is scale-free). For a deep linear MLP x -> W0 -> W1..WL
-> V with widths n, muP gives W0 ~ N(0, 1/d), Wl ~ N(0, 1/n), V ~ N(0, 1/n^2) and an SGD lr constant for the hidden
layers, as in Hayou's proof of learning-rate transfer.

Multipliers are made relative to a base model: lr(factor) = lr_base * mult(factor) / mult(same factor at base
width), so the base model trains at lr_base exactly. Qiu et al.'s structure-aware learning rate is muP per factor
divided by the number of factors of the layer (`split_by_factors=True`, their "k"); their naive baseline gives
every factor of a layer the multiplier of the dense layer it replaces (`per_layer=True`).
"""
import math

import torch

SCHEMES = ("sp", "ntp", "mup")


def init_std(scheme, fan_in, fan_out):
    if scheme not in SCHEMES:
        raise ValueError(f"parametrisation {scheme!r}: choose from {SCHEMES}")
    std = 1 / math.sqrt(fan_in)
    return std * min(1.0, math.sqrt(fan_out / fan_in)) if scheme == "mup" else std


def lr_multiplier(scheme, fan_in, fan_out, optimizer="adam"):
    if scheme not in SCHEMES:
        raise ValueError(f"parametrisation {scheme!r}: choose from {SCHEMES}")
    if optimizer not in ("sgd", "adam"):
        raise ValueError(f"optimizer {optimizer!r}: 'sgd' or 'adam'")
    if scheme == "sp":
        return 1.0
    if scheme == "ntp":
        return 1 / fan_in if optimizer == "sgd" else 1 / math.sqrt(fan_in)
    return fan_out / fan_in if optimizer == "sgd" else 1 / fan_in


def factor_table(layers, scheme, optimizer="adam", per_layer=False, split_by_factors=False):
    """One row per factor of each named layer ({name: structured layer}): name, parameter, fan_in, fan_out,
    init std and (absolute) lr multiplier. per_layer: use the whole layer's (d_in, d_out) for the lr, as if dense."""
    rows = []
    for layer_name, layer in layers.items():
        factors = layer.factors()
        for name, param, fan_in, fan_out in factors:
            lr_in, lr_out = (layer.d_in, layer.d_out) if per_layer else (fan_in, fan_out)
            mult = lr_multiplier(scheme, lr_in, lr_out, optimizer) / (len(factors) if split_by_factors else 1)
            rows.append({"name": f"{layer_name}.{name}", "param": param, "fan_in": fan_in, "fan_out": fan_out,
                         "init_std": init_std(scheme, fan_in, fan_out), "lr_mult": mult})
    return rows


@torch.no_grad()
def initialize(rows, generator=None, zero=()):
    """Draw every factor from N(0, init_std^2); factors whose name is in `zero` start at 0 (a zero-init head)."""
    for row in rows:
        if row["name"] in zero:
            row["param"].zero_()
        else:
            row["param"].normal_(0.0, row["init_std"], generator=generator)


def param_groups(rows, lr, base_rows=None, base_layers=None):
    """Optimizer parameter groups with lr = lr * mult / base_mult. The base is taken row by row from `base_rows`
    (the same model at its base width; the names must match), or per layer from `base_layers` ({layer name: mult},
    e.g. the multiplier of each layer's dense form at the base width, which Qiu et al.'s lr is relative to), or is
    1 (absolute multipliers) when neither is given."""
    if base_rows is not None and base_layers is not None:
        raise ValueError("give base_rows or base_layers, not both")
    base = {r["name"]: r["lr_mult"] for r in base_rows} if base_rows is not None else {}
    if base_rows is not None and set(base) != {r["name"] for r in rows}:
        raise ValueError("base_rows must list the same factors as rows (the same model at its base width)")
    if base_layers is not None:
        base = {r["name"]: base_layers[r["name"].split(".")[0]] for r in rows}
    return [{"params": [r["param"]], "lr": lr * r["lr_mult"] / base.get(r["name"], 1.0), "name": r["name"]}
            for r in rows]
