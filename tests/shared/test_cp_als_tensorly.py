"""shared.nn.group_analysis.cp_als against TensorLy's CP-ALS (tensorly.decomposition.parafac, pinned in
envs/requirements.lock for this test) on tensors of known CP rank: both fit at the true rank (ours to rounding),
neither one rank below, and TensorLy rebuilds the tensor from our factors."""
import numpy as np
import pytest

from shared.nn.group_analysis import cp_als

tl = pytest.importorskip("tensorly")
from tensorly.cp_tensor import cp_to_tensor  # noqa: E402
from tensorly.decomposition import parafac  # noqa: E402

CASES = [((4, 5, 6), 2), ((6, 4, 7), 4)]


def known_rank(shape, rank, seed):
    rng = np.random.default_rng(seed)
    return cp_to_tensor((np.ones(rank), [rng.standard_normal((n, rank)) for n in shape]))


def tensorly_error(tensor, rank, sweeps, restarts=4):
    """Best-of-restarts relative error of TensorLy's CP-ALS (random init, as cp_als)."""
    errors = []
    for seed in range(restarts):
        cp = parafac(tl.tensor(tensor), rank, n_iter_max=sweeps, init="random", tol=1e-10, random_state=seed)
        errors.append(np.linalg.norm(cp_to_tensor(cp) - tensor) / np.linalg.norm(tensor))
    return min(errors)


@pytest.mark.parametrize("shape, rank", CASES)
def test_cp_als_agrees_with_tensorly_parafac(shape, rank):
    tensor = known_rank(shape, rank, seed=rank)
    ours, factors = cp_als(tensor, rank)
    assert ours < 1e-8 and tensorly_error(tensor, rank, sweeps=1000) < 1e-4  # TensorLy converges more slowly
    rebuilt = cp_to_tensor((np.ones(rank), list(factors)))  # our (A, B, C) is TensorLy's CP layout
    assert np.linalg.norm(rebuilt - tensor) / np.linalg.norm(tensor) < 1e-8
    below_ours = cp_als(tensor, rank - 1, restarts=2, sweeps=200)[0]
    assert below_ours > 1e-3 and tensorly_error(tensor, rank - 1, sweeps=200, restarts=2) > 1e-3
