"""mlp_mixer_wide_sparse: the tiers' run specs, the models' counts (the SW-MLP's non-zeros are the Mixer's, the
dense block's parameters the Mixer block's), the patching, the linear algebra identities, and a short training."""
import pytest
import torch

from replications.mlp_mixer_wide_sparse import analyze_linear, common, model, pipeline
from shared.pipeline.paper import load_papers

PAPER = "mlp_mixer_wide_sparse"


@pytest.mark.parametrize("tier", ["quick", "full"])
def test_committed_tiers_hold_every_kind_and_config(tier):
    cfg = load_papers([PAPER], tier, {})[PAPER].cfg
    compare = common.specs(cfg, "compare")
    assert {(s["kind"], s["seed"]) for s in compare} == {(k, s) for k in model.KINDS for s in cfg["seeds"]}
    sweep = common.specs(cfg, "sweep")
    assert len(sweep) == len(cfg["sweep"]["configs"]) * len(cfg["seeds"])
    assert pipeline.mixing_params(16, 47, 2) == model.mixer_block_params(16, 47, 2)


def spec(kind, tokens_side=4, patch=2, channels=3):
    return {"kind": kind, "patch": patch, "tokens": tokens_side ** 2, "channels": channels, "expansion": 2,
            "seed": 0, "in_channels": 1, "n_classes": 10, "act": "gelu", "depth": 2}


def test_sw_mlp_matches_the_mixer_connections_and_dense_its_parameters():
    torch.manual_seed(0)
    nets = {kind: model.build(spec(kind)) for kind in model.KINDS}
    assert model.block_nonzeros(nets["sw_mlp"]) == model.block_nonzeros(nets["mixer"]) == model.block_nonzeros(
        nets["rp_mixer"])
    per_block = model.mixer_block_params(16, 3, 2)
    dense = sum(p.numel() for p in nets["dense"].blocks[0].parameters())
    hidden = model.dense_hidden(16, 3, 2)
    for other in (hidden - 1, hidden + 1):  # the closest hidden width
        assert abs(dense - per_block) <= abs(2 * 48 * other + other + 48 - per_block)
    x = torch.randn(5, 1, 8, 8)
    for net in nets.values():
        assert net(x).shape == (5, 10)


def test_patches_are_row_by_row():
    net = model.build(spec("none", tokens_side=2, patch=2, channels=1))
    img = torch.arange(16.0).reshape(1, 1, 4, 4)
    assert net.tokens(img)[0].tolist() == [[0, 1, 4, 5], [2, 3, 6, 7], [8, 9, 12, 13], [10, 11, 14, 15]]


def test_linear_identities_are_exact_and_a_short_fit_runs():
    assert analyze_linear.identities(0) == (0.0, 0.0)
    lin = {"size": 4, "samples": 2, "teacher_density": 0.5, "init_scale": 0.1, "lr": 0.05, "steps": 20}
    row = analyze_linear.sparsity_run(lin, 0)
    assert 0 < row["teacher"] <= 1 and row["dense_train"] < 1


def test_short_training_records_each_epoch():
    gen = torch.Generator().manual_seed(0)
    data = {"x_train": torch.randn(40, 1, 8, 8, generator=gen), "y_train": torch.randint(0, 10, (40,), generator=gen)}
    net = model.build(spec("mixer"))
    history = common.train_model(net, data, {"epochs": 2, "batch_size": 10, "lr": 1e-3, "weight_decay": 0.0},
                                 torch.Generator().manual_seed(1), "cpu")
    assert [h["epoch"] for h in history] == [1, 2]
