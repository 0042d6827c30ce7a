"""minimal_transformer: the arms of both tiers declare their built parameter counts (the reduced ones save what
the claims say), and the analysis helpers are exact on known cases (a collapsed copy of a separate model, the PSD
form's non-negative self-scores)."""
import pytest
import torch

from replications.minimal_transformer import analyze, common, model
from shared.pipeline.paper import load_papers

PAPER = "minimal_transformer"


@pytest.mark.parametrize("tier", ["quick", "full"])
def test_arms_declare_their_built_parameter_counts(tier):
    cfg = load_papers([PAPER], tier, {})[PAPER].cfg
    for name, e in cfg["experiments"].items():
        params = {"spec": e, "model": cfg["model"]}
        specs = {s["arm"]: s for s in common.specs(params) if s["seed"] == e["seeds"][0]}
        assert set(specs) == {arm for arm, *_ in common.ARMS}
        for spec in specs.values():
            with torch.device("meta"):
                assert sum(p.numel() for p in model.build(spec).parameters()) == spec["params"], spec["arm"]
        saving = 1 - specs["no_mlp_psd_novo"]["params"] / specs["original"]["params"]
        assert saving >= 0.85, (tier, name, saving)  # I5
        assert specs["embed_only"]["n_layer"] == 0 and specs["no_mlp"]["mlp_ratio"] == 0


def _spec(**kw):
    base = {"image_size": 28, "channels": 1, "patch": 7, "d": 8, "n_layer": 2, "n_head": 1, "n_classes": 10,
            "qk": "separate", "vo": "separate", "mlp_ratio": 4}
    return {**base, **kw}


def test_collapse_error_is_rounding_and_selfsim_of_psd_is_zero():
    torch.manual_seed(0)
    x = torch.randn(4, 1, 28, 28, dtype=torch.float64)
    spec = _spec()
    assert analyze.collapse_error(model.build(spec), spec, x) < 1e-12
    psd = model.build(_spec(qk="psd", vo="identity", mlp_ratio=0)).double()
    neg, below = analyze.self_similarity(psd, x)
    assert neg == 0 and 0 <= below <= 1
    asym, smallest = analyze.symmetry(psd, x)
    assert asym < 1e-12 and smallest >= 0
    std = model.build(_spec()).double()
    assert analyze.self_similarity(std, x)[0] > 0  # an untrained standard head: some s_ii < 0
