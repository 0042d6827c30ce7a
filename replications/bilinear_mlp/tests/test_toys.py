"""The bilinear_mlp toys: the Boolean task of the authors' tutorial (theory/toy_boolean.py) and the relabelling of
section 4.3's similarity-to-target task (image/target_task.py). Hand-built networks are checked against their
predicted interaction matrices in float64."""
import pytest
import torch

from replications.bilinear_mlp.image import target_task as task
from replications.bilinear_mlp.theory import toy_boolean as toy

F64 = torch.float64
TRUTH = {  # gate -> outputs on (a, b) = (0, 0), (0, 1), (1, 0), (1, 1)
    "and": [0, 0, 0, 1], "or": [0, 1, 1, 1], "xor": [0, 1, 1, 0],
    "nand": [1, 1, 1, 0], "nor": [1, 0, 0, 0], "xnor": [1, 0, 0, 1],
}
SETTINGS = dict(n_inputs=4, n_hidden=6, p_on=0.3, batch_size=512, lr=0.01, seed=0)




def _hand_built(left, right, head, bias=False):
    """A BooleanModel with the given weights (rows of left/right: hidden units; head: outputs x hidden)."""
    model = toy.BooleanModel(left.shape[1], left.shape[0], head.shape[0], bias=bias).double()
    with torch.no_grad():
        model.mixer.proj.weight.copy_(torch.cat([left, right]))
        model.head.weight.copy_(head)
    return model


# ---------------------------------------------------------------- data
@pytest.mark.parametrize("gate", sorted(TRUTH))
def test_gate_truth_tables(gate):
    x = torch.tensor([[False, False], [False, True], [True, False], [True, True]])
    assert toy.gate_targets(x, gate)[:, 0].tolist() == TRUTH[gate]


def test_outputs_are_the_pairs_in_order():
    x = torch.tensor([[True, False, True, True]])
    assert toy.pairs(4) == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    assert toy.gate_targets(x, "and")[0].tolist() == [0, 1, 1, 0, 0, 1]


def test_inputs_have_the_marginals_and_are_independent():
    x = toy.sample_inputs(torch.Generator().manual_seed(0), 200_000, 4, 0.3).double()
    sd = (0.3 * 0.7 / len(x)) ** 0.5
    assert torch.allclose(x.mean(0), torch.full((4,), 0.3, dtype=F64), atol=5 * sd)
    assert abs((x[:, 0] * x[:, 1]).mean().item() - 0.09) < 5 * (0.09 * 0.91 / len(x)) ** 0.5
    same = toy.sample_inputs(torch.Generator().manual_seed(0), 200_000, 4, 0.3).double()
    assert torch.equal(x, same)  # a seeded stream


def test_all_inputs_and_their_probabilities():
    x, prob = toy.all_inputs(4, 0.3)
    assert x.shape == (16, 4) and len({tuple(r) for r in x.tolist()}) == 16
    assert abs(prob.sum().item() - 1) < 1e-12
    assert abs(prob @ x[:, 2].double() - 0.3) < 1e-12
    # the best constant predictor's error is the variance: AND p^2 (1 - p^2), XOR 2p(1-p) (1 - 2p(1-p))
    assert abs(toy.target_variance("and", 4, 0.3) - 0.09 * 0.91) < 1e-12
    assert abs(toy.target_variance("xor", 4, 0.3) - 0.42 * 0.58) < 1e-12


# ---------------------------------------------------------------- hand-built networks, float64
def test_hand_built_and_network_has_the_predicted_interaction_matrices():
    """Hidden unit (i, j) computes x_i x_j with left = e_i, right = e_j; the head is the identity."""
    eye = torch.eye(4, dtype=F64)
    idx = torch.tensor(toy.pairs(4))
    model = _hand_built(eye[idx[:, 0]], eye[idx[:, 1]], torch.eye(6, dtype=F64))
    assert toy.expected_mse(model, "and", 4, 0.3) < 1e-24  # computes AND exactly on every input
    sym, raw = model.interaction_tensor(), model.interaction_tensor(symmetric=False)
    for o, (i, j) in enumerate(toy.pairs(4)):
        predicted = 0.5 * (torch.outer(eye[i], eye[j]) + torch.outer(eye[j], eye[i]))  # x^T Q x = x_i x_j
        torch.testing.assert_close(sym[o], predicted, rtol=0, atol=1e-12)
        torch.testing.assert_close(raw[o], torch.outer(eye[i], eye[j]), rtol=0, atol=1e-12)
    dom = toy.pair_dominance(sym, 4)
    torch.testing.assert_close(dom, torch.tensor([[0.5, 0.0, 0.0]] * 6, dtype=F64), rtol=0, atol=1e-12)
    # the raw matrix puts the whole interaction on one side of the diagonal: as antisymmetric as it is symmetric
    torch.testing.assert_close(toy.antisymmetric_ratio(raw), torch.ones(6, dtype=F64), rtol=0, atol=1e-12)


def test_xor_is_quadratic_on_boolean_inputs():
    """x^2 = x for x in {0, 1}, so XOR(x_i, x_j) = (x_i - x_j)^2: a bias-free network of 6 units computes it exactly."""
    eye = torch.eye(4, dtype=F64)
    idx = torch.tensor(toy.pairs(4))
    diff = eye[idx[:, 0]] - eye[idx[:, 1]]
    model = _hand_built(diff, diff, torch.eye(6, dtype=F64))
    assert toy.expected_mse(model, "xor", 4, 0.3) < 1e-24


def test_bias_augmentation_reproduces_the_biased_model():
    torch.manual_seed(0)
    model = toy.BooleanModel(4, 6, 6, bias=True).double()
    x, _ = toy.all_inputs(4, 0.3)
    x = x.double()
    xp = torch.cat([x, torch.ones(len(x), 1, dtype=F64)], dim=1)  # x' = [x, 1]
    for symmetric in (True, False):
        b = model.interaction_tensor(symmetric=symmetric)
        assert b.shape == (6, 5, 5)
        torch.testing.assert_close(torch.einsum("ni,oij,nj->no", xp, b, xp), model(x), rtol=0, atol=1e-12)


# ---------------------------------------------------------------- training
def test_training_is_deterministic():
    a, loss_a = toy.train_boolean("xor", True, steps=30, weight_decay=0.0, **SETTINGS)
    b, loss_b = toy.train_boolean("xor", True, steps=30, weight_decay=0.0, **SETTINGS)
    assert loss_a == loss_b
    for (ka, va), (kb, vb) in zip(a.state_dict().items(), b.state_dict().items()):
        assert ka == kb and torch.equal(va, vb)


def test_short_training_learns_and():
    model, losses = toy.train_boolean("and", False, steps=600, weight_decay=0.0, **SETTINGS)
    assert losses[-1] < losses[0]
    assert toy.expected_mse(model, "and", 4, 0.3) < 0.01 * toy.target_variance("and", 4, 0.3)
    dom = toy.pair_dominance(model.interaction_tensor(), 4)
    assert (dom[:, 0] > 0).all() and (dom[:, 0] > 5 * dom[:, 1]).all()


# ---------------------------------------------------------------- section 4.3 relabelling
def test_target_index_counts_within_the_digit():
    labels = torch.tensor([3, 1, 2, 1, 1])
    assert task.target_index(labels, 1, 0) == 1 and task.target_index(labels, 1, 2) == 4
    with pytest.raises(ValueError, match="rank 3"):
        task.target_index(labels, 1, 3)


def test_similarity_labels_on_hand_made_vectors():
    target = torch.tensor([1.0, 1.0, 1.0, 0.0, 0.0, 0.0])  # 1 - target = [0, 0, 0, 1, 1, 1]
    x = torch.tensor([
        [1.0, 1.0, 0.0, 0.0, 0.0, 0.0],  # cos with target 2/sqrt(6) = 0.816
        [0.0, 0.0, 0.0, 0.0, 1.0, 1.0],  # cos with 1 - target 0.816 (the complement counts too)
        [1.0, 0.0, 0.0, 1.0, 0.0, 0.0],  # cos 1/sqrt(6) = 0.408 with both
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],  # an empty image matches nothing
    ])
    assert task.similarity_labels(x, target, 0.4).tolist() == [1, 1, 1, 0]
    assert task.similarity_labels(x, target, 0.5).tolist() == [1, 1, 0, 0]
    assert task.similarity_labels(x, target, 0.9).tolist() == [0, 0, 0, 0]
    # the threshold is strict: cos exactly equal to it is not a match
    edge = torch.tensor([[1.0, 1.0]]), torch.tensor([1.0, 0.0])  # cos = 1/sqrt(2) with the target and its complement
    assert task.similarity_labels(*edge, 0.5 ** 0.5 + 1e-15).tolist() == [0]
    assert task.similarity_labels(*edge, 0.5 ** 0.5 - 1e-15).tolist() == [1]


def test_relabel_keeps_digits_and_target():
    x = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.6, 0.8]])
    data = {"x_train": x[:3], "y_train": torch.tensor([7, 1, 1]), "x_test": x[3:], "y_test": torch.tensor([2])}
    out = task.relabel(data, {"target_digit": 1, "target_rank": 1, "threshold": 0.7})
    assert out["target_index"] == 2 and torch.equal(out["target"], x[2])
    assert out["y_train"].tolist() == [1, 1, 1]  # [0, 1] matches 1 - target = [0, 1]
    assert out["y_test"].tolist() == [1]  # cos([0.6, 0.8], [0, 1]) = 0.8
    assert out["digits_train"].tolist() == [7, 1, 1] and out["digits_test"].tolist() == [2]
