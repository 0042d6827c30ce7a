"""The shared language-model helpers (shared.nn.bilinear_analysis, shared.stats, shared.train.language_model,
shared.nn.transformer) on random weights in float64: low-rank approximations of quadratic forms and their
correlations, self/cross interactions; windows of a token stream and the next-token training loop. The paper's own
uses of them are tested in replications/bilinear_mlp/tests/test_language.py."""
import math

import pytest
import torch

from shared import stats
from shared.io.runtime import generator
from shared.nn import bilinear_analysis as analysis
from shared.nn.transformer import Transformer
from shared.train.language_model import LMSchedule, document_starts, fixed_windows, random_windows, train_lm, windows_at
from shared.train.schedules import linear_lr

F64 = torch.float64
REL = 1e-12


def _rel(a, b):
    return ((a - b).norm() / b.norm()).item()


def test_full_rank_approximation_is_exact_and_correlates_perfectly():
    g = torch.Generator().manual_seed(1)
    q = analysis.symmetrize(torch.randn(5, 5, dtype=F64, generator=g))
    x = torch.randn(200, 5, dtype=F64, generator=g)
    y = ((x @ q) * x).sum(-1)
    vals, vecs = analysis.eigendecompose(q)
    assert _rel(analysis.eigen_contributions(vals, vecs, x).sum(-1), y) < REL
    corr = analysis.low_rank_correlations(vals, vecs, x, y - 3.0, [1, 2, 5, 9])  # a constant offset does not matter
    assert corr[2] == pytest.approx(1.0, abs=1e-12) and corr[3] == pytest.approx(1.0, abs=1e-12)
    assert corr[0] < 1 - 1e-6


def test_rank_one_feature_is_captured_by_one_eigenvector():
    g = torch.Generator().manual_seed(2)
    v = torch.randn(6, dtype=F64, generator=g)
    q = 2.0 * torch.outer(v, v) + 1e-3 * analysis.symmetrize(torch.randn(6, 6, dtype=F64, generator=g))
    x = torch.randn(300, 6, dtype=F64, generator=g)
    vals, vecs = analysis.eigendecompose(q)
    assert analysis.low_rank_correlations(vals, vecs, x, ((x @ q) * x).sum(-1), [1])[0] > 0.999


def test_in_basis_is_the_quadratic_form_of_the_reconstruction():
    g = torch.Generator().manual_seed(3)
    q = torch.randn(4, 4, dtype=F64, generator=g)
    basis = torch.randn(4, 7, dtype=F64, generator=g)
    z = torch.randn(30, 7, dtype=F64, generator=g)
    x = z @ basis.T
    assert _rel(((z @ analysis.in_basis(q, basis)) * z).sum(-1), ((x @ q) * x).sum(-1)) < REL
    torch.testing.assert_close(analysis.in_basis(q, basis), analysis.in_basis(q, basis).T)


def test_self_and_cross_and_top_interactions():
    q = torch.tensor([[1.0, -5.0, 0.5], [-5.0, 0.1, 2.0], [0.5, 2.0, -3.0]], dtype=F64)
    selfs, cross = analysis.self_and_cross(q)
    assert selfs.tolist() == [1.0, 0.1, -3.0] and sorted(cross.tolist()) == [-5.0, 0.5, 2.0]
    assert analysis.top_interactions(q, 3) == [(0, 1, -5.0), (2, 2, -3.0), (1, 2, 2.0)]


def test_pearson_matches_numpy():
    import numpy as np

    a, b = torch.randn(50, dtype=F64), torch.randn(50, dtype=F64)
    assert stats.pearson(a, b) == pytest.approx(np.corrcoef(a.numpy(), b.numpy())[0, 1], abs=1e-12)


# ---------------------------------------------------------------- training loop
def test_linear_schedule_warms_up_then_decays_to_zero():
    lrs = [linear_lr(1.0, s, 10, 2) for s in range(10)]
    assert lrs[:2] == [0.5, 1.0] and lrs[2] == 1.0 and lrs[-1] == pytest.approx(1 / 8)
    assert all(a >= b for a, b in zip(lrs[1:], lrs[2:]))


def test_windows():
    stream = torch.arange(100)
    assert fixed_windows(stream, 5, 30).shape == (3, 30)  # only 3 fit
    assert torch.equal(fixed_windows(stream, 2, 10)[1], torch.arange(10, 20))
    w = random_windows(stream, 8, 5, generator(0))
    assert torch.equal(w, random_windows(stream, 8, 5, generator(0)))
    assert torch.equal(w[:, 1:] - w[:, :-1], torch.ones(8, 4, dtype=torch.long))  # contiguous slices


def test_document_windows_start_at_bos_and_fit():
    stream = torch.tensor([1, 5, 6, 2, 1, 7, 2, 1, 8, 9, 2, 1, 3])
    starts = document_starts(stream, 10, 4, bos=1)
    assert starts.tolist() == [0, 4, 7]  # the BOS at 11 has no room for a whole window
    assert windows_at(stream, starts, 4)[:, 0].tolist() == [1, 1, 1]
    assert windows_at(stream * 10, starts[:1], 3).tolist() == [[10, 50, 60]]  # any aligned array
    assert document_starts(stream, 2, 4, bos=1).tolist() == [0, 4]


def _train(seed, steps=40):
    torch.manual_seed(seed)
    model = Transformer(5, d_model=16, d_hidden=32, n_head=2, n_layer=1, n_ctx=8)
    stream = torch.arange(4000) % 5  # a periodic stream: perfectly predictable from one token
    hist = train_lm(model, stream, fixed_windows(stream, 8, 9), LMSchedule(steps=steps, batch_size=16, lr=1e-2,
                    warmup=5, eval_every=steps // 2), seed, torch.device("cpu"), progress=False)
    return model, hist


def test_training_learns_and_is_deterministic():
    model, hist = _train(0)
    again, hist2 = _train(0)
    assert hist[-1]["val_loss"] < 0.3 < hist[0]["train_loss"]
    assert [h["val_loss"] for h in hist] == [h["val_loss"] for h in hist2]
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), again.state_dict().values()))


def test_constant_approximation_correlates_zero_and_constant_target_is_refused():
    x = torch.randn(20, 3, dtype=F64)
    vals, vecs = torch.tensor([1.0, 0.5, 0.0], dtype=F64), torch.eye(3, dtype=F64)
    x[:, 0] = 1.0  # the top eigenvector sees the same value on every token
    y = torch.randn(20, dtype=F64)
    assert analysis.low_rank_correlations(vals, vecs, x, y, [1])[0] == 0.0
    assert math.isnan(stats.pearson(torch.ones(5, dtype=F64), torch.randn(5, dtype=F64)))
    with pytest.raises(ValueError, match="constant"):
        analysis.low_rank_correlations(vals, vecs, x, torch.ones(20, dtype=F64), [1])
