"""transcoders: the planted teacher (its edges are what MLP2 reads: a transcoder built from the true weights has
weight products equal to G plus superposition interference, and is exact on the teacher), AUROC and the frontier
gap against hand values, and the models of both tiers (built on the meta device, shapes only)."""
import pytest
import torch

from replications.transcoders import common, model
from shared.nn.transcoder import Transcoder
from shared.pipeline.paper import load_papers

PAPER = "transcoders"
T_CFG = {"d": 24, "features": 16, "features_out": 12, "parents": [1, 3], "p": 0.1, "noise": 0.0, "theta1": 0.3,
         "theta2": 0.3}


def test_teacher_is_two_sparse_mlps_with_planted_edges():
    T = common.planted_teacher(T_CFG, 0)
    assert T["G"].shape == (12, 16)
    parents = (T["G"] != 0).sum(1)
    assert parents.min() >= 1 and parents.max() <= 3
    assert torch.allclose(T["B"].norm(dim=0), torch.ones(16, dtype=torch.float64))
    data = common.teacher_sample(T, T_CFG, 256, torch.Generator().manual_seed(0))
    # transcoders built from the teacher's own weights reproduce each MLP exactly
    tc1 = Transcoder(24, 24, 16).double()
    tc2 = Transcoder(24, 24, 12).double()
    with torch.no_grad():
        for p in (*tc1.parameters(), *tc2.parameters()):
            p.zero_()
        tc1.W_enc.copy_(T["A"].T), tc1.b_enc.fill_(-0.3), tc1.W_dec.copy_(T["B"].T)
        tc2.W_enc.copy_(T["G"] @ T["B"].T), tc2.b_enc.fill_(-0.3), tc2.W_dec.copy_(T["C"].T)
    assert (tc1(data["x1"]) - data["y1"]).abs().max() < 1e-12
    assert (tc2(data["x2"]) - data["y2"]).abs().max() < 1e-12
    # their weight products are G plus the interference of superposed output directions
    products = (tc1.W_dec @ tc2.W_enc.T).T
    assert torch.allclose(products, T["G"] @ (T["B"].T @ T["B"]), atol=1e-12)
    assert common.auroc(products.abs(), T["G"] != 0) > 0.9


def test_auroc_and_frontier_gap_by_hand():
    assert common.auroc(torch.tensor([0.1, 0.4, 0.35, 0.8]), torch.tensor([0, 0, 1, 1])) == 0.75
    assert common.auroc(torch.tensor([1.0, 1.0]), torch.tensor([0, 1])) == 0.5  # a tie counts half
    gap, overlap = common.frontier_gap([1, 10], [0.5, 0.9], [1, 10], [0.4, 0.8])
    assert overlap and abs(gap - 0.1) < 1e-12
    gap, overlap = common.frontier_gap([1, 2], [0.5, 0.6], [5, 10], [0.9, 0.95])
    assert not overlap and abs(gap - (0.6 - 0.9)) < 1e-12


def test_match_finds_the_closest_rows():
    cols = torch.eye(3, dtype=torch.float64)
    rows = torch.tensor([[0.0, 2.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, -1.0]], dtype=torch.float64)
    best, index = common.match(rows, cols)
    assert index.tolist()[:2] == [1, 0] and torch.allclose(best, torch.tensor([2 ** -0.5, 1.0, 0.0],
                                                                            dtype=torch.float64))


@pytest.mark.parametrize("tier", ["quick", "full"])
def test_models_of_both_tiers_build(tier):
    cfg = load_papers([PAPER], tier, {})[PAPER].cfg
    m = cfg["lm"]["model"]
    with torch.device("meta"):
        lm = model.build({"kind": "lm", "mlp": cfg["lm"]["mlp"], "model": m, "vocab_size": 129})
        d = m["d_model"]
        tc = model.build({"kind": "transcoder", "d_in": d, "d_out": d, "n_features": cfg["dicts"]["expansion"] * d})
        sae = model.build({"kind": "sae", "d_in": d, "d_out": d, "n_features": cfg["dicts"]["expansion"] * d})
    assert len(lm.blocks) == m["n_layer"] and tc.W_enc.shape == (cfg["dicts"]["expansion"] * d, d)
    assert sae.b_dec_out is None
    if tier == "full":
        assert (d, m["n_layer"], cfg["dicts"]["expansion"]) == (768, 12, 32)  # GPT2-small's shape, expansion 32
