"""shared.nn.layer_registry: every registered family's declared counts against the module it builds (parameters by
numel, multiply-adds by torch's FLOP counter and by hand on one size), its shapes, the matched width, and a family
registered from outside the registry."""
import sys

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from shared.nn import layer_registry as registry

FAMILIES = registry.families()
SIZES = [(16, 36), (36, 24)]  # (d_in, d_out) of a layer, (d, h) of a block; divisible by Monarch's 4 blocks
# hyperparameters other than the defaults, so that the formulas are checked where each one enters
VARIANTS = {"dense": [{"bias": True, "activation": "gelu"}], "bilinear": [{"bias": True}], "swiglu": [{"bias": True}],
            "low_rank": [{"rank": 3}], "monarch": [{"blocks": 2}], "btt": [{"rank": 2}],
            "bcos": [{"max_out": 1, "b": 1.5}], "quadratic": [{"bias": True}]}
CASES = [(name, form, hyper) for name, fam in FAMILIES.items() for form in fam.forms()
         for hyper in [{}, *VARIANTS.get(name, [])]]


def _id(case):
    name, form, hyper = case
    return "-".join([name, form, *(f"{k}={v}" for k, v in hyper.items())])


def n_params(module):
    return sum(p.numel() for p in module.parameters())


def counted_macs(module, d_in, batch=3):
    """Multiply-adds per example as torch's FLOP counter sees an eval-mode forward pass (it counts 2 per
    multiply-add), after a first pass: a layer whose weights are formed from its parameters (the sandwich layer's
    Cayley transform) forms them once per update, not per example."""
    module.eval()
    module(torch.randn(1, d_in))
    with FlopCounterMode(display=False) as counter:
        module(torch.randn(batch, d_in))
    return counter.get_total_flops() // (2 * batch)


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_declared_counts_are_the_built_modules(case):
    name, form, hyper = case
    for d_in, d_out in SIZES:
        module = registry.make(name, d_in, d_out, form, **hyper)
        declared = registry.count(name, d_in, d_out, form, **hyper)
        assert declared["params"] == n_params(module), (d_in, d_out)
        assert declared["macs"] == counted_macs(module, d_in), (d_in, d_out)


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_shapes_of_the_drop_in_and_the_block(case):
    name, form, hyper = case
    d_in, d_out = SIZES[0]
    module = registry.make(name, d_in, d_out, form, **hyper)
    x = torch.randn(2, 5, d_in, requires_grad=True)  # leading axes of a sequence model
    y = module(x)
    assert y.shape == (2, 5, d_out if form == "layer" else d_in)
    assert torch.isfinite(y).all() and y.abs().sum() > 0  # initialised, not left at torch.empty's garbage or zero
    y.pow(2).sum().backward()
    assert all(p.grad is not None for p in module.parameters())


# counts worked out by hand from the docstrings' formulas with the default hyperparameters:
# layer 16 -> 36 (params, macs), block 16 -> 32 -> 16 (params, macs). Kronecker / BTT split 16 = 4 x 4,
# 36 = 6 x 6, 32 = 4 x 8.
HAND = {"dense": (576, 576, 1024, 1024), "bilinear": (1152, 1152, 1536, 1536), "reglu": (1152, 1152, 1536, 1536),
        "geglu": (1152, 1152, 1536, 1536), "swiglu": (1152, 1152, 1536, 1536), "low_rank": (416, 416, 768, 768),
        "kronecker": (2 * 24, 4 * 4 * 6 + 6 * 4 * 6, 48 + 48, 4 * 4 * 8 + 4 * 4 * 8 + 4 * 8 * 4 + 4 * 4 * 4),
        "monarch": (4 * 9 * 4 + 4 * 9 * 9, 468, 4 * 8 * 4 + 4 * 8 * 8 + 4 * 4 * 8 + 4 * 4 * 4, 576),
        "btt": (4 * 4 * 6 + 6 * 4 * 6, 240, 4 * 4 * 4 + 4 * 4 * 8 + 4 * 8 * 4 + 4 * 4 * 4, 384),
        "bcos": (1152, 1152, 2048, 2048), "quadratic": (576, 576, 1024, 1024)}


@pytest.mark.parametrize("name", sorted(HAND))
def test_counts_by_hand(name):
    layer, block = registry.count(name, 16, 36), registry.count(name, 16, 32, "block")
    assert (layer["params"], layer["macs"], block["params"], block["macs"]) == HAND[name]


def test_the_library_families_are_registered():
    assert set(HAND) <= set(FAMILIES) and len(HAND) == 11


WIDTHS = [16, 32, 64, 128, 256, 512, 1024, 2048, 4096]


@pytest.mark.parametrize("measure", registry.MEASURES)
@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_width_for_budget_lands_within_one_step(name, measure):
    """The chosen width's neighbours in the grid bracket the budget (a dense ReLU block's count), both when the
    block's two sizes grow together (d = w, h = 4 w) and when the model width d is fixed and h varies."""
    for d, expansion in ((None, 4), (32, 1)):
        budget = registry.count("dense", *registry.sizes(128, d, expansion), "block")[measure]
        w = registry.width_for_budget(name, budget, WIDTHS, measure, d=d, expansion=expansion)
        i = WIDTHS.index(w)

        def cost(j):
            return registry.count(name, *registry.sizes(WIDTHS[j], d, expansion), "block")[measure]
        assert i == 0 or cost(i - 1) <= budget, (d, w)
        assert i == len(WIDTHS) - 1 or budget <= cost(i + 1), (d, w)


def test_width_for_budget_recovers_a_known_width():
    for measure in registry.MEASURES:
        budget = registry.count("swiglu", 32, 96, "block")[measure]
        assert registry.width_for_budget("swiglu", budget, WIDTHS + [96], measure, d=32) == 96
    # equal parameters: a ReLU block 32 -> 96 -> 32 matches a GLU block of hidden width 2/3 of it (Shazeer)
    relu = registry.count("dense", 32, 96, "block")["params"]
    assert registry.width_for_budget("swiglu", relu, [32, 64, 96], d=32) == 64


def test_bad_requests_name_the_family_and_the_key():
    with pytest.raises(ValueError, match="'nope'.*choose from"):
        registry.make("nope", 4, 4)
    with pytest.raises(ValueError, match="'btt'.*'blocks'"):
        registry.count("btt", 16, 16, blocks=4)
    with pytest.raises(ValueError, match="measure 'flops'"):
        registry.width_for_budget("dense", 100, WIDTHS, "flops")
    with pytest.raises(ValueError, match="already registered"):
        registry.register("dense", layer=None, params=None, macs=None)


PLUGIN = '''
from torch import nn
from shared.nn.layer_registry import register

register("plugin_linear", layer=lambda d_in, d_out, bias: nn.Linear(d_in, d_out, bias=bias),
         params=lambda d_in, d_out, bias: d_in * d_out + bias * d_out, macs=lambda d_in, d_out, bias: d_in * d_out,
         hyper={"bias": True}, cite="a later paper")
'''


def test_a_family_registered_by_another_module_is_listed(tmp_path, monkeypatch):
    """A module that registers a layer, in a searched package, is found by families() with no edit to the registry;
    its counts then pass the same checks as the library's."""
    (tmp_path / "later_paper").mkdir()
    (tmp_path / "later_paper" / "__init__.py").write_text("")
    (tmp_path / "later_paper" / "tversky_like.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "FAMILIES", dict(registry.FAMILIES))
    monkeypatch.setattr(registry, "PACKAGES", [*registry.PACKAGES, "later_paper"])
    monkeypatch.setattr(registry, "_discovered", False)
    try:
        listed = registry.families()
        assert set(listed) == set(FAMILIES) | {"plugin_linear"}
        assert listed["plugin_linear"].forms() == ("layer",)
        test_declared_counts_are_the_built_modules(("plugin_linear", "layer", {}))
    finally:
        for module in ("later_paper.tversky_like", "later_paper"):
            sys.modules.pop(module, None)
