"""The layer registry: every layer family of shared/nn declared once, so that a benchmark can build each one at a
given size, count it exactly and match its width to a parameter or compute budget.

A family declares two forms:
  layer  a drop-in for a dense d_in -> d_out layer (..., d_in) -> (..., d_out). `nonlinear` says whether the layer
         carries its own nonlinearity (bilinear, GLU, B-cos, quadratic: a network stacks them bare) or is a linear
         map that a network follows with an activation (dense, the structured layers).
  block  an MLP block d -> h -> d (..., d) -> (..., d), as used inside a residual stream; optional.
and for each form its exact parameter count and forward multiply-adds per example as functions of the sizes and the
hyperparameters, and the hyperparameters with their defaults (`hyper`; every function receives all of them).

Multiply-adds count the products of the weight matmuls (what torch.utils.flop_counter counts, halved, and what
shared.nn.structured's `macs()` counts); elementwise work linear in the width (activations, gates, the bilinear
product, B-cos norms and scales, biases) is left out. Parameters count every trainable number, biases included.

Families and their defaults            params = macs: layer d_in -> d_out | block d -> h -> d
  dense (bias=False, activation=relu)  d_in d_out            | 2 d h     nn.Linear | bilinear.ActivationMLP
  bilinear, reglu, geglu, swiglu       2 d_in d_out          | 3 d h     bilinear.Bilinear | BilinearMLP
    (bias=False)
  quadratic (bias=False)               d_in d_out            | 2 d h     (W x)^2, multiplicative.py's x^2 unit
  bcos (b=2, max_out=m=2)              m d_in d_out          | 2 m d h   bcos.BcosLinear | two of them
  low_rank (rank=8), kronecker, monarch (blocks=4), btt (rank=1), each with activation=relu for the block: the
    layers of shared.nn.structured, whose n_params and macs_of give the counts (e.g. BTT r m1 n0 (m0 + n1));
    block: layer, activation, layer. Their factors start as nn.Linear's do, U(+-1/sqrt(fan_in)) per factor.
  With bias=True, params add d_out (GLUs: 2 d_out) and, for the block, h + d (GLUs: 2 h + d).
A width is matched to a budget over a grid (`width_for_budget`): the block's sizes are (d, w) with d fixed, or
(w, expansion w) with d=None, as in structured.matched_width.

Registering a later paper's layer (in its own module under shared/nn, no edit here):

    from shared.nn.layer_registry import register

    register("tversky", layer=lambda d_in, d_out, prototypes: TverskyLinear(d_in, d_out, prototypes),
             params=lambda d_in, d_out, prototypes: ..., macs=lambda d_in, d_out, prototypes: ...,
             hyper={"prototypes": 16}, nonlinear=True, cite="Doumbouya et al. 2025")

`families()` first imports every module of PACKAGES (shared.nn) that mentions this registry, so such a layer appears
in the listing (and in a benchmark that iterates over it) with no other edit.
"""
import importlib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

import torch
from torch import nn

from shared.nn import structured
from shared.nn.bcos import BcosLinear
from shared.nn.bilinear import ActivationMLP, Bilinear, BilinearMLP
from shared.nn.multiplicative import ACTIVATIONS as UNIT_ACTIVATIONS

FORMS = ("layer", "block")
MEASURES = ("params", "macs")


@dataclass(frozen=True)
class Family:
    name: str
    layer: Callable[..., nn.Module]          # (d_in, d_out, **hyper) -> module
    params: Callable[..., int]               # (d_in, d_out, **hyper) -> trainable numbers
    macs: Callable[..., int]                 # (d_in, d_out, **hyper) -> forward multiply-adds per example
    block: Optional[Callable[..., nn.Module]] = None   # (d, h, **hyper) -> module d -> h -> d
    block_params: Optional[Callable[..., int]] = None
    block_macs: Optional[Callable[..., int]] = None
    hyper: dict = field(default_factory=dict)
    nonlinear: bool = False
    cite: str = ""

    def forms(self):
        return FORMS if self.block is not None else ("layer",)


FAMILIES = {}


def register(name, *, layer, params, macs, block=None, block_params=None, block_macs=None, hyper=None,
             nonlinear=False, cite=""):
    """Add a family to the registry (see the module docstring); a name can be registered once."""
    if name in FAMILIES:
        raise ValueError(f"layer family {name!r} is already registered")
    if (block is None) != (block_params is None) or (block is None) != (block_macs is None):
        raise ValueError(f"layer family {name!r}: give block, block_params and block_macs together, or none")
    FAMILIES[name] = Family(name, layer, params, macs, block, block_params, block_macs, dict(hyper or {}),
                            nonlinear, cite)
    return FAMILIES[name]


PACKAGES = ["shared.nn"]  # searched for modules that register a family
_discovered = False


def families():
    """{name: Family} of every registered family, after importing each module of PACKAGES whose source mentions
    this registry (only those: importing all of shared/nn would load heavy analysis libraries)."""
    global _discovered
    if not _discovered:
        for package in PACKAGES:
            for path in sorted(Path(importlib.import_module(package).__path__[0]).glob("*.py")):
                if path != Path(__file__) and "layer_registry" in path.read_text():
                    importlib.import_module(f"{package}.{path.stem}")
        _discovered = True
    return dict(FAMILIES)


def family(name):
    table = families()
    if name not in table:
        raise ValueError(f"layer family {name!r}: choose from {sorted(table)}")
    return table[name]


def _resolve(name, form, hyper):
    """The family and its hyperparameters (defaults overridden by `hyper`), checked."""
    fam = family(name)
    if form not in fam.forms():
        raise ValueError(f"layer family {name!r} has no {form!r} form (it has {list(fam.forms())})")
    unknown = set(hyper) - set(fam.hyper)
    if unknown:
        raise ValueError(f"layer family {name!r}: unknown hyperparameter(s) {sorted(unknown)}; "
                         f"it takes {sorted(fam.hyper)}")
    return fam, {**fam.hyper, **hyper}


def make(name, d_in, d_out, form="layer", **hyper):
    """The module: form 'layer' maps d_in -> d_out; form 'block' maps d -> h -> d with (d, h) = (d_in, d_out)."""
    fam, hp = _resolve(name, form, hyper)
    return (fam.layer if form == "layer" else fam.block)(d_in, d_out, **hp)


def count(name, d_in, d_out, form="layer", **hyper):
    """{'params': ..., 'macs': ...} of make(name, d_in, d_out, form, **hyper), from the declared formulas."""
    fam, hp = _resolve(name, form, hyper)
    if form == "layer":
        return {"params": fam.params(d_in, d_out, **hp), "macs": fam.macs(d_in, d_out, **hp)}
    return {"params": fam.block_params(d_in, d_out, **hp), "macs": fam.block_macs(d_in, d_out, **hp)}


def sizes(width, d=None, expansion=1):
    """The (d_in, d_out) a width stands for: (d, width) with d fixed (e.g. a block's hidden width at a given
    model width), else (width, expansion * width) (both grow, as in structured.matched_width)."""
    return (d, width) if d is not None else (width, expansion * width)


def width_for_budget(name, budget, widths, measure="params", form="block", d=None, expansion=1, **hyper):
    """The width in `widths` whose count (`measure`: 'params' or 'macs', of sizes(width, d, expansion)) is closest
    in log to `budget`. A structured family's block matched on multiply-adds is structured.matched_width itself."""
    if measure not in MEASURES:
        raise ValueError(f"measure {measure!r}: choose from {MEASURES}")
    fam, hp = _resolve(name, form, hyper)
    if fam.name in STRUCTURED and measure == "macs" and form == "block" and d is None:
        return structured.matched_width(name, budget, widths, expansion=expansion, **_options(hp))
    return min(widths, key=lambda w: abs(math.log(count(name, *sizes(w, d, expansion), form, **hp)[measure]
                                                  / budget)))


# --- the library's families --------------------------------------------------------------------------------------

ACTIVATIONS = ActivationMLP.ACTIVATIONS  # the activations an MLP block of this library can take: relu, gelu, silu


class Activated(nn.Module):
    """layer(x) followed by an elementwise function: the hidden half of a block, or a layer with its own unit."""

    def __init__(self, layer, fn):
        super().__init__()
        self.layer, self.fn = layer, fn

    def forward(self, x):
        return self.fn(self.layer(x))


def _register_dense():
    register("dense", layer=lambda d_in, d_out, bias, activation: nn.Linear(d_in, d_out, bias=bias),
             params=lambda d_in, d_out, bias, activation: d_in * d_out + bias * d_out,
             macs=lambda d_in, d_out, bias, activation: d_in * d_out,
             block=lambda d, h, bias, activation: ActivationMLP(d, h, activation=activation, bias=bias),
             block_params=lambda d, h, bias, activation: 2 * d * h + bias * (h + d),
             block_macs=lambda d, h, bias, activation: 2 * d * h,
             hyper={"bias": False, "activation": "relu"}, cite="the ReLU MLP baseline")


GLU_CITES = {None: "Pearce et al. 2025; Sharkey 2023", "relu": "Shazeer 2020", "gelu": "Shazeer 2020",
             "silu": "Shazeer 2020"}


def _register_bilinear(name, gate):
    register(name, layer=lambda d_in, d_out, bias: Bilinear(d_in, d_out, bias=bias, gate=gate),
             params=lambda d_in, d_out, bias: 2 * d_in * d_out + bias * 2 * d_out,
             macs=lambda d_in, d_out, bias: 2 * d_in * d_out,
             block=lambda d, h, bias: BilinearMLP(d, h, bias=bias, gate=gate),
             block_params=lambda d, h, bias: 3 * d * h + bias * (2 * h + d),
             block_macs=lambda d, h, bias: 3 * d * h,
             hyper={"bias": False}, nonlinear=True, cite=GLU_CITES[gate])


def _options(hyper):
    """A structured family's hyperparameters less the block's activation: the options of structured.build."""
    return {k: v for k, v in hyper.items() if k != "activation"}


def _structured_layer(structure, d_in, d_out, options):
    """The structured layer with torch's nn.Linear default init applied to each factor: U(+-1/sqrt(fan_in)) with
    the factor's own fan-in (its blocks' fan-in for a Monarch or BTT core). structured.py leaves it uninitialised."""
    layer = structured.build(structure, d_in, d_out, **options)
    for _, param, fan_in, _ in layer.factors():
        bound = 1 / math.sqrt(fan_in)
        nn.init.uniform_(param, -bound, bound)
    return layer


def _structured_params(structure, d_in, d_out, options):
    with torch.device("meta"):  # no memory, no init
        return structured.build(structure, d_in, d_out, **options).n_params()


def _register_structured(structure, hyper):
    register(structure,
             layer=lambda d_in, d_out, **hp: _structured_layer(structure, d_in, d_out, _options(hp)),
             params=lambda d_in, d_out, **hp: _structured_params(structure, d_in, d_out, _options(hp)),
             macs=lambda d_in, d_out, **hp: structured.macs_of(structure, d_in, d_out, **_options(hp)),
             block=lambda d, h, **hp: nn.Sequential(
                 Activated(_structured_layer(structure, d, h, _options(hp)), ACTIVATIONS[hp["activation"]]),
                 _structured_layer(structure, h, d, _options(hp))),
             block_params=lambda d, h, **hp: (_structured_params(structure, d, h, _options(hp))
                                              + _structured_params(structure, h, d, _options(hp))),
             block_macs=lambda d, h, **hp: (structured.macs_of(structure, d, h, **_options(hp))
                                            + structured.macs_of(structure, h, d, **_options(hp))),
             hyper={**hyper, "activation": "relu"}, cite="Qiu et al. 2024 (Compute Better Spent)")


# structured's "dense" is nn.Linear without a bias: the "dense" family above already stands for it
STRUCTURED = {"low_rank": {"rank": 8}, "kronecker": {}, "monarch": {"blocks": 4}, "btt": {"rank": 1}}


class Rows(nn.Module):
    """A layer that takes (N, d_in) only, applied to (..., d_in): B-cos's MaxOut groups units along axis 1."""

    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def forward(self, x):
        y = self.layer(x.reshape(-1, x.shape[-1]))
        return y.reshape(*x.shape[:-1], y.shape[-1])


def _register_bcos():
    def layer(d_in, d_out, b, max_out):
        return Rows(BcosLinear(d_in, d_out, b=b, max_out=max_out))

    register("bcos", layer=layer,
             params=lambda d_in, d_out, b, max_out: max_out * d_in * d_out,
             macs=lambda d_in, d_out, b, max_out: max_out * d_in * d_out,
             block=lambda d, h, b, max_out: nn.Sequential(layer(d, h, b, max_out), layer(h, d, b, max_out)),
             block_params=lambda d, h, b, max_out: 2 * max_out * d * h,
             block_macs=lambda d, h, b, max_out: 2 * max_out * d * h,
             hyper={"b": 2.0, "max_out": 2}, nonlinear=True, cite="Böhle, Fritz & Schiele 2022")


def _register_quadratic():
    square = UNIT_ACTIVATIONS["quadratic"]
    register("quadratic", layer=lambda d_in, d_out, bias: Activated(nn.Linear(d_in, d_out, bias=bias), square),
             params=lambda d_in, d_out, bias: d_in * d_out + bias * d_out,
             macs=lambda d_in, d_out, bias: d_in * d_out,
             block=lambda d, h, bias: nn.Sequential(Activated(nn.Linear(d, h, bias=bias), square),
                                                    nn.Linear(h, d, bias=bias)),
             block_params=lambda d, h, bias: 2 * d * h + bias * (h + d),
             block_macs=lambda d, h, bias: 2 * d * h,
             hyper={"bias": False}, nonlinear=True, cite="Tian 2025 (Li2; x^2 units)")


_register_dense()
for _name, _gate in (("bilinear", None), ("reglu", "relu"), ("geglu", "gelu"), ("swiglu", "silu")):
    _register_bilinear(_name, _gate)
for _structure, _hyper in STRUCTURED.items():
    _register_structured(_structure, _hyper)
_register_bcos()
_register_quadratic()
