"""monet: the tiers' run specs and matched widths, every model variant, the analysis's shift references and its
truncation at the rank cap."""
import pytest
import torch

from replications.monet import analyze_polynomial as ap
from replications.monet import common, model
from shared.nn import bilinear_analysis as ba
from shared.nn.polynomial import MuLayer, spatial_shift
from shared.pipeline.paper import load_papers

PAPER = "monet"


@pytest.mark.parametrize("tier", ["quick", "full"])
def test_tiers_match_the_flat_models_to_the_monet(tier):
    cfg = load_papers([PAPER], tier, {})[PAPER].cfg
    budget = common.monet_budget(cfg)
    for spec in common.specs(cfg, "flat"):
        if spec["kind"] in ("relu", "bilinear", "mu"):
            params = common.flat_params(spec["kind"], spec["hidden"], spec["rank"], cfg["d_input"], cfg["n_classes"])
            assert abs(params / budget - 1) < 0.05, spec["name"]
            with torch.device("meta"):
                assert model.n_params(model.build(spec)) == params
    assert len(common.specs(cfg, "monet")) == len(cfg["seeds"]) * len(cfg["monet"]["variants"])


def test_every_variant_builds_and_classifies():
    cfg = load_papers([PAPER], "quick", {})[PAPER].cfg
    x = torch.randn(3, cfg["d_input"])
    for group in common.GROUPS:
        for spec in common.specs(cfg, group)[: len(model.MONET_VARIANTS)]:
            torch.manual_seed(0)
            assert model.build(spec)(x).shape == (3, cfg["n_classes"]), spec["name"]


def test_the_reference_shift_is_the_layers_shift():
    grid = torch.randn(2, 4, 5, 9, dtype=torch.float64)  # 9 channels: the last group takes the remainder
    assert torch.equal(spatial_shift(grid), ap.reference_shift(grid))


def test_truncation_at_the_rank_cap_is_the_layer():
    torch.manual_seed(0)
    layer = MuLayer(12, 4, 16, 2).double()
    x = torch.randn(200, 12, dtype=torch.float64)
    y = layer(x).argmax(-1)  # its own predictions: the full layer scores 1
    cap = 2 * (layer.rank + 1)
    z = ba.append_one(x)
    err, cap_residual, top, rand, vals, _ = ap.truncation(layer, z[:20], z, y, [1, cap], 2,
                                                          torch.Generator().manual_seed(0))
    assert err < 1e-12 and cap_residual < 1e-12
    full = torch.linalg.eigvalsh(ap.interaction_matrices(layer)[0])  # the projected eigenvalues are Q_c's non-zero ones
    top_full = full.gather(1, full.abs().argsort(1, descending=True)[:, :cap])
    assert torch.allclose(vals.sort(1).values, top_full.sort(1).values, atol=1e-10)
    assert top[cap] == 1.0 and rand[cap] == 1.0 and top[1] < 1.0
