"""Unit tests of the paper's blocks: the patched passes are exact, and the config checks catch bad configs."""
import copy

import pytest
import torch

from shared.data.icl_regression import embed, sample_prompts
from shared.pipeline.config import ConfigError
from replications.implicit_icl_update import pipeline
from replications.implicit_icl_update.model import build


def prompts(n=6, d=2, batch=5):
    pr = sample_prompts(batch, n, d, torch.Generator().manual_seed(0), dtype=torch.float64)
    return embed(pr)


@pytest.mark.parametrize("kind,skip", [("softmax", False), ("softmax", True), ("linear", False), ("gru", False),
                                       ("gru", True)])
def test_patched_prediction_exact(kind, skip):
    torch.manual_seed(0)
    model = build({"d": 2, "kind": kind, "width": 5, "skip": skip}).double()
    z = prompts()
    with torch.no_grad():
        assert (model(z) - model.patched_prediction(z)).abs().max() < 1e-12


def test_steering_needed_and_stack_exact():
    torch.manual_seed(1)
    z = prompts()
    skip = build({"d": 2, "kind": "softmax", "width": 5, "skip": True}).double()
    stack = build({"d": 2, "kind": "softmax", "width": 5, "skip": True, "layers": 3}).double()
    with torch.no_grad():
        assert (skip(z) - skip.patched_prediction(z, steering=False)).abs().max() > 1e-3
        assert (stack(z) - stack.stacked_patched_prediction(z)).abs().max() < 1e-12


def test_config_checks():
    cfg = {"models": {"attn": {"kind": "softmax", "skip": False}, "attn_skip": {"kind": "softmax", "skip": True},
                      "gru": {"kind": "gru", "skip": False}, "stack": {"kind": "softmax", "skip": True, "layers": 2}},
           "steps": 10, "eval_every": 5}
    pipeline.check(cfg)
    for edit in ({"steps": 2}, {"models": {**cfg["models"], "stack": {"kind": "softmax", "skip": True}}},
                 {"models": {k: v for k, v in cfg["models"].items() if k != "gru"}},
                 {"models": {**cfg["models"], "attn": {"kind": "gru", "skip": False}}}):
        with pytest.raises(ConfigError):
            pipeline.check({**copy.deepcopy(cfg), **edit})
