"""tversky_networks: the arms declare their built parameter counts (both tiers), the Tversky unembedding's
prototypes are the token embedding (tied, not copied), and the reference properties of the layer on this paper's
models: alpha = beta = 0 with a linear bank is a dot product; XOR is representable by one Tversky projection."""
import pytest
import torch

from replications.tversky_networks import common, model
from shared.nn.tversky import TverskyProjection
from shared.pipeline.paper import load_papers

PAPER = "tversky_networks"


@pytest.mark.parametrize("tier", ["quick", "full"])
def test_arms_declare_their_built_parameter_counts(tier):
    cfg = load_papers([PAPER], tier, {})[PAPER].cfg
    for spec in common.image_specs(cfg):
        with torch.device("meta"):
            assert model.n_params(model.build(spec)) == spec["params"], spec["name"]
    for spec in common.lm_specs(cfg, vocab_size=129):
        with torch.device("meta"):
            assert model.n_params(model.build(spec)) == common.lm_params(spec), spec["name"]
    arms = {s["arm"]: s["params"] for s in common.image_specs(cfg)}
    assert abs(arms["mlp_matched"] / arms["tversky"] - 1) < 0.05


def test_tversky_unembedding_prototypes_are_the_embedding():
    spec = {"arch": "lm", "head": "tversky", "features": 8, "init_scale": 0.25, "vocab_size": 20,
            "model": {"d_model": 16, "d_hidden": 16, "n_head": 2, "n_layer": 1, "n_ctx": 8}}
    lm = model.build(spec)
    tokens = torch.randint(0, 20, (2, 9))
    lm.loss(tokens).backward()
    assert lm.embed.weight.grad is not None and lm.out.fbank.grad is not None
    assert "out.prototypes" not in dict(lm.named_parameters())
    with torch.no_grad():
        lm.embed.weight[3] += 1.0  # moving a token's embedding moves its prototype
        h = torch.randn(1, 16)
        expected = lm.out(h, prototypes=lm.embed.weight)
    assert torch.equal(lm.unembed(h), expected)


def test_linear_head_of_zero_alpha_beta():
    """alpha = beta = 0, theta = 1 and the identity bank on non-negative inputs and prototypes: x . pi."""
    layer = TverskyProjection(4, 3, 4).double()
    with torch.no_grad():
        layer.fbank.copy_(torch.eye(4, dtype=torch.float64))
        layer.alpha.zero_(), layer.beta.zero_()
    x = torch.rand(5, 4, dtype=torch.float64)
    assert (layer(x) - x @ layer.prototypes.T).abs().max() < 1e-13


def test_one_tversky_projection_learns_xor():
    """Trained as the xor step trains it (K = 8, Adam 0.1, 500 steps): some seed of three classifies all four points,
    and no linear layer does (XOR is not linearly separable: K1's premise)."""
    solved = []
    for seed in range(3):
        torch.manual_seed(seed)
        layer = model.build({"arch": "xor", "layer": "tversky", "features": 8})
        common.train_xor(layer, 500, 0.1)
        with torch.no_grad():
            solved.append(bool(torch.equal(layer(common.XOR_X).argmax(-1), common.XOR_Y)))
    assert any(solved)
    linear = torch.nn.Linear(2, 2)
    common.train_xor(linear, 500, 0.1)
    with torch.no_grad():
        assert (linear(common.XOR_X).argmax(-1) == common.XOR_Y).sum() <= 3
