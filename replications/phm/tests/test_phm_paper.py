"""phm: the planted teachers (the quaternion one is a Hamilton-product layer; the rearrangement ranks behind E1 and
E2), the span distance, and the MLP arms of both tiers (declared parameter counts are the built modules')."""
import pytest
import torch

from replications.phm import common, model
from shared.nn.phm import quaternion_linear
from shared.pipeline.paper import load_papers

PAPER = "phm"


def rearrangement_rank(h, n, tol=1e-9):
    """Rank of the Van Loan-Pitsianis rearrangement of h for left factors n x n: the fewest Kronecker terms
    A_i (x) S_i (A_i n x n) that sum to h."""
    p, q = h.shape[0] // n, h.shape[1] // n
    blocks = h.reshape(n, p, n, q).permute(0, 2, 1, 3).reshape(n * n, p * q)  # row (a, b): vec of block (a, b)
    s = torch.linalg.svdvals(blocks)
    return int((s > tol * s[0]).sum())


def test_quaternion_teacher_is_a_hamilton_layer_with_the_claimed_ranks():
    h = common.teacher_matrix("quaternion", 32, seed=0)
    x = torch.randn(5, 32, dtype=torch.float64)
    blocks = torch.stack([h[:8, 8 * c:8 * c + 8] * (1 if c == 0 else -1) for c in range(4)])  # W_r, W_i, W_j, W_k
    assert (x @ h.T - quaternion_linear(x, blocks)).abs().max() < 1e-12
    assert [rearrangement_rank(h, n) for n in (2, 4, 8)] == [2, 4, 16]  # E1: 2 <= 2 terms; E2: 16 > 8
    assert rearrangement_rank(common.teacher_matrix("dense", 32, seed=0), 4) == 16  # the dense teacher: no algebra


def test_teacher_data_are_seeded_and_split():
    t = {"d": 8, "n_train": 16, "n_test": 16, "noise": 0.01}
    x1, y1 = common.teacher_data("quaternion", t, 3, "train")
    x2, _ = common.teacher_data("quaternion", t, 3, "train")
    x3, _ = common.teacher_data("quaternion", t, 3, "test")
    assert torch.equal(x1, x2) and not torch.equal(x1, x3)
    assert (y1 - x1 @ common.teacher_matrix("quaternion", 8, 3).T).std() < 0.02


def test_span_sine_ignores_mixing_and_sees_other_algebras():
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(4, 4, 4, generator=gen, dtype=torch.float64)
    mixed = torch.einsum("ij,jpq->ipq", torch.randn(4, 4, generator=gen, dtype=torch.float64), a)
    assert common.span_sine(mixed, a) < 1e-6  # a sine from cosines near 1: rounding of sqrt(1 - cos^2), ~1e-8
    e = torch.eye(16, dtype=torch.float64).reshape(16, 4, 4)
    assert abs(common.span_sine(e[:4], e[4:8]) - 1) < 1e-12


@pytest.mark.parametrize("tier", ["quick", "full"])
def test_arms_declare_their_built_parameter_counts(tier):
    cfg = load_papers([PAPER], tier, {})[PAPER].cfg
    specs = {s["arm"]: s for s in common.image_specs(cfg) if s["seed"] == cfg["images"]["seeds"][0]}
    assert {"dense", "phm2", "phm4", "phm8", "quaternion", "dense_matched", "linear"} <= set(specs)
    for spec in specs.values():
        with torch.device("meta"):
            assert sum(p.numel() for p in model.build(spec).parameters()) == spec["params"], spec["arm"]
    assert abs(specs["dense_matched"]["params"] / specs["phm4"]["params"] - 1) < 0.05
    for spec in common.teacher_specs(cfg):
        assert cfg["teacher"]["d"] % spec["n"] == 0


def test_agreement_task_labels_the_first_noun_and_is_seeded():
    cfg = load_papers([PAPER], "quick", {})[PAPER].cfg
    s = {**cfg["seq"], "n_train": 200, "n_test": 50}
    x, y = common.agreement_data(s, "train")
    assert torch.equal(x, common.agreement_data(s, "train")[0])
    assert not torch.equal(x[:50], common.agreement_data(s, "test")[0])
    f, n = s["fillers"], s["nouns"]
    for row, label in zip(x.tolist(), y.tolist()):
        nouns = [t for t in row if t >= f]
        assert (nouns[0] - f) // n == label  # the first noun's number is the label
        assert s["attractors"][0] + 1 <= len(nouns) <= s["attractors"][1] + 1
        assert row.index(nouns[0]) <= s["max_prefix"]


@pytest.mark.parametrize("tier", ["quick", "full"])
def test_seq_arms_declare_their_block_parameters(tier):
    cfg = load_papers([PAPER], tier, {})[PAPER].cfg
    specs = {s["arm"]: s for s in common.seq_specs(cfg) if s["seed"] == cfg["seq"]["seeds"][0]}
    assert {"dense", "phm2", "phm4", "phm8", "bow"} == set(specs)
    for spec in specs.values():
        built = model.build(spec)
        maps = sum(p.numel() for m in built.modules() if isinstance(m, model.Map) for p in m.map.parameters())
        assert maps == spec["body_params"], spec["arm"]
    assert abs(specs["phm4"]["body_params"] / specs["dense"]["body_params"] - 0.26) < 0.01


def test_materialised_phm_map_equals_the_einsum_forward():
    torch.manual_seed(0)
    fast = model.Map("phm", 16, 32, 4, bias=True, materialise=True).double()
    slow = model.Map("phm", 16, 32, 4, bias=True).double()
    slow.load_state_dict(fast.state_dict())
    x = torch.randn(3, 5, 16, dtype=torch.float64)
    assert (fast(x) - slow(x)).abs().max() < 1e-12
