"""lsa_one_step_gd: the tiers' runs, the prompt laws of the runs, the model's reference prediction, a short training."""
import pytest
import torch

from replications.lsa_one_step_gd import common, model, train
from shared.data.icl_regression import embed
from shared.nn import icl_baselines as bl
from shared.pipeline.paper import load_papers

PAPER = "lsa_one_step_gd"


@pytest.mark.parametrize("tier", ["quick", "full"])
def test_committed_tiers_train_every_iso_run(tier):
    cfg = load_papers([PAPER], tier, {})[PAPER].cfg
    assert len(common.specs(cfg, "iso")) == len(cfg["seeds"]) * len(cfg["experiments"]["iso"]["n"]) * \
        len(cfg["experiments"]["iso"]["d"]) * len(cfg["experiments"]["iso"]["sigma"])


def test_spectrum_and_covariance():
    assert common.spectrum(5, 16) == pytest.approx([0.25, 0.5, 1, 2, 4])
    cov = common.covariance(5, 16, 7)
    assert torch.allclose(torch.linalg.eigvalsh(cov), torch.tensor([0.25, 0.5, 1, 2, 4], dtype=torch.float64))


def test_noniso_law_pairs_sigma_with_its_inverse():
    spec = {"d": 5, "n": 20, "sigma": 0.5, "task": "linear", "condition": 16, "basis_seed": 7}
    cov, w_cov = common.law(spec)
    assert torch.allclose(cov @ w_cov, torch.eye(5, dtype=torch.float64), atol=1e-12)
    star = bl.gamma_star(cov, w_cov, 20, 0.5)
    assert torch.allclose(star, bl.eta_star(20, 5, 0.5) * w_cov, atol=1e-12)


@pytest.mark.parametrize("mask", [False, True])
def test_reference_prediction_is_the_forward(mask):
    torch.manual_seed(0)
    spec = {"d": 4, "param": "full", "mask_query_key": mask, "init_std": 0.5}
    m = model.build(spec).double()
    run = {"d": 4, "n": 9, "sigma": 0.3, "task": "linear", "condition": 1.0}
    batch = common.prompts(run, 64, torch.Generator().manual_seed(1), dtype=torch.float64)
    with torch.no_grad():
        assert torch.allclose(m(embed(batch)), model.reference_prediction(m, batch), atol=1e-12)


def test_short_training_moves_gamma_towards_eta_star():
    torch.manual_seed(0)
    spec = {"d": 3, "n": 10, "sigma": 0.5, "task": "linear", "condition": 1.0, "param": "full",
            "mask_query_key": False, "init_std": 0.1}
    m = model.build(spec)
    eye = torch.eye(3, dtype=torch.float64)
    star = bl.eta_star(10, 3, 0.5) * eye
    before = torch.linalg.norm(model.preconditioner(m)[0] - star)
    p = {"optim": {"lr": 0.02, "batch": 128, "steps": 800, "log_every": 100}}
    log = train.train_one(m, spec, p, torch.Generator().manual_seed(2), torch.device("cpu"))
    after = torch.linalg.norm(model.preconditioner(m)[0] - star)
    assert after < 0.2 * before
    assert log[-1]["loss"] < log[0]["loss"]
