"""grokking_group_words: the tiers' experiments, the fusion cover and rank bound from characters, the model's conventions."""
import numpy as np
import pytest
import torch

from replications.grokking_group_words import common, pipeline
from replications.grokking_group_words.model import build
from shared.data.groups import by_name, real_components, word_tensor
from shared.nn.group_analysis import cp_als, support_triples
from shared.pipeline.paper import load_papers

PAPER = "grokking_group_words"


@pytest.mark.parametrize("tier", ["quick", "full"])
def test_committed_tiers_run_grok_and_one_width_sweep_per_group(tier):
    cfg = load_papers([PAPER], tier, {})[PAPER].cfg
    assert pipeline.experiments(cfg)[0] == "grok" and len(pipeline.experiments(cfg)) == 1 + len(cfg["width"]["groups"])


@pytest.mark.parametrize("name, bound", [("Z3", (4, 3)), ("Z5", (7, 6)), ("S3", (9, 8)), ("D4", (11, 10)),
                                         ("Q8", (12, 11))])
def test_block_sum_bound(name, bound):
    assert common.block_sum_bound(by_name(name)) == bound


def test_power_zero_is_trivial_and_power_one_is_itself():
    group = by_name("S3")
    for z in range(len(real_components(group))):
        assert common.tensor_power_components(group, z, 0) == {0}
        assert common.tensor_power_components(group, z, 1) == {z}


@pytest.mark.parametrize("name, word", [("Z5", "abA"), ("Z5", "abAB"), ("S3", "abAB"), ("A4", "abA"), ("Q8", "aab")])
def test_support_inside_fusion_cover(name, word):
    group = by_name(name)
    assert support_triples(word_tensor(group, word), real_components(group)) <= common.fusion_cover(group, word)


def test_cover_of_ab_is_the_diagonal():
    group = by_name("A4")
    assert common.fusion_cover(group, "ab") == {(i, i, i) for i in range(len(real_components(group)))}


def test_bilinear_member_computes_its_cp_tensor():
    """A width-K bilinear member with left = A, right = B, out = C^T computes sum_k A[a,k] B[b,k] C[c,k]; set from
    an exact CP decomposition of the centred Z3 tensor it fits the table exactly (centred_error ~ 0)."""
    group, a, b, labels = common.task("Z3", "ab")
    error, (fa, fb, fc) = cp_als(word_tensor(group, "ab") - 1.0 / 3, 3, restarts=4, sweeps=300)
    assert error < 1e-6
    model = build({"n": 3, "width": 3, "activation": "bilinear", "seeds": [0], "init_scale": 1.0})
    with torch.no_grad():
        model.left[0] = torch.as_tensor(fa, dtype=torch.float32)
        model.right[0] = torch.as_tensor(fb, dtype=torch.float32)
        model.out[0] = torch.as_tensor(fc.T, dtype=torch.float32)
    assert common.centred_error(model, a, b, labels).item() < 1e-4
    assert common.centred_error(build({"n": 3, "width": 3, "activation": "bilinear", "seeds": [0],
                                       "init_scale": 1.0}), a, b, labels).item() > 0.1
    assert np.isclose(labels.numpy().reshape(3, 3)[1, 2], 0)
