"""Identities of shared.nn.bilinear_analysis in float64 on random weights (Sharkey 2023; Pearce et al. 2025, sections 2-3)."""
import importlib.util
import sys
from pathlib import Path

import pytest
import torch

from shared.nn import bilinear_analysis as analysis
from shared.nn.bilinear import Bilinear

F64 = torch.float64
REL = 1e-12  # relative tolerance for exact identities in float64
PAPER_DIR = Path(__file__).resolve().parents[2] / "replications" / "bilinear_mlp"

# (d input, h hidden, o outputs)
SHAPES = [(3, 4, 2), (6, 5, 7), (8, 16, 10), (12, 9, 1)]
SEEDS = [0, 1]


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def _weights(d, h, o, seed):
    g = _gen(seed)
    w = torch.randn(h, d, generator=g, dtype=F64)
    v = torch.randn(h, d, generator=g, dtype=F64)
    u = torch.randn(o, h, generator=g, dtype=F64)
    return w, v, u


def _sym_matrices(o, d, seed):
    a = torch.randn(o, d, d, generator=_gen(seed), dtype=F64)
    return 0.5 * (a + a.transpose(-1, -2))


def _close(actual, expected, rel=REL):
    """|actual - expected| <= rel * max|expected| elementwise (relative to the tensor's scale)."""
    scale = expected.abs().max().clamp_min(1.0)
    torch.testing.assert_close(actual, expected, rtol=0, atol=rel * scale.item())


def _ref_tensor(w, v, u):
    """B[o, i, j] = sum_h U[o, h] W[h, i] V[h, j] with explicit loops over o and h."""
    o, d = u.shape[0], w.shape[1]
    b = torch.zeros(o, d, d, dtype=w.dtype)
    for oi in range(o):
        for hi in range(w.shape[0]):
            b[oi] += u[oi, hi] * torch.outer(w[hi], v[hi])
    return b


def _load_image_classifier():
    sys.path.insert(0, str(PAPER_DIR))
    spec = importlib.util.spec_from_file_location("bilinear_mlp_model", PAPER_DIR / "model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.ImageClassifier


# ---------------------------------------------------------------- the bilinear tensor
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("d, h, o", SHAPES)
def test_bilinear_tensor_contraction_equals_layer(d, h, o, seed):
    w, v, u = _weights(d, h, o, seed)
    z = torch.randn(13, d, generator=_gen(seed + 100), dtype=F64)
    b = analysis.bilinear_tensor(w, v, u)
    assert b.shape == (o, d, d)
    _close(b, _ref_tensor(w, v, u))
    direct = ((z @ w.T) * (z @ v.T)) @ u.T  # U (Wz * Vz)
    _close(torch.einsum("ni,oij,nj->no", z, b, z), direct)
    # without `out`: one d x d matrix per hidden unit, z^T B[h] z = (Wz)_h (Vz)_h
    bh = analysis.bilinear_tensor(w, v)
    assert bh.shape == (h, d, d)
    _close(torch.einsum("ni,hij,nj->nh", z, bh, z), (z @ w.T) * (z @ v.T))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("d, h, o", SHAPES)
def test_antisymmetric_part_contributes_nothing(d, h, o, seed):
    w, v, u = _weights(d, h, o, seed)
    z = torch.randn(17, d, generator=_gen(seed + 200), dtype=F64)
    b = analysis.bilinear_tensor(w, v, u)
    sym = analysis.bilinear_tensor(w, v, u, symmetric=True)
    anti = b - sym
    torch.testing.assert_close(sym, sym.transpose(-1, -2), rtol=0, atol=0)
    _close(anti, -anti.transpose(-1, -2))
    if d > 1:
        assert anti.abs().max() > 1e-3  # the test would be vacuous if B were already symmetric
    quad = lambda m: torch.einsum("ni,oij,nj->no", z, m, z)
    scale = quad(b).abs().max().item()
    torch.testing.assert_close(quad(anti), torch.zeros_like(quad(anti)), rtol=0, atol=REL * max(scale, 1.0))
    _close(quad(sym), quad(b))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("d, h, o", SHAPES)
def test_interaction_matrix_is_weighted_sum_of_symmetrized_slices(d, h, o, seed):
    w, v, u = _weights(d, h, o, seed)
    direction = torch.randn(o, generator=_gen(seed + 300), dtype=F64)
    b = _ref_tensor(w, v, u)
    expected = sum(direction[k] * 0.5 * (b[k] + b[k].T) for k in range(o))
    q = analysis.interaction_matrix(w, v, u, direction)
    assert q.shape == (d, d)
    _close(q, expected)
    torch.testing.assert_close(q, q.T, rtol=0, atol=0)
    # a one-hot direction picks one output's matrix, which interaction_matrices returns row by row
    qs = analysis.interaction_matrices(w, v, u)
    assert qs.shape == (o, d, d)
    torch.testing.assert_close(qs, qs.transpose(-1, -2), rtol=0, atol=0)
    for k in range(o):
        _close(analysis.interaction_matrix(w, v, u, torch.eye(o, dtype=F64)[k]), qs[k])
    _close(torch.einsum("o,oij->ij", direction, qs), q)


# ---------------------------------------------------------------- eigendecomposition
@pytest.mark.parametrize("order", ["magnitude", "signed"])
@pytest.mark.parametrize("o, d", [(1, 4), (3, 7), (10, 12)])
def test_eigendecompose_order_and_reconstruction(order, o, d):
    q = _sym_matrices(o, d, seed=o * 31 + d)
    vals, vecs = analysis.eigendecompose(q, order=order)
    assert vals.shape == (o, d) and vecs.shape == (o, d, d)
    key = vals.abs() if order == "magnitude" else vals
    assert torch.all(key[..., :-1] >= key[..., 1:]), "not in descending order"
    # rows are eigenvectors: Q v_k = lambda_k v_k, orthonormal
    _close(torch.einsum("oij,okj->oki", q, vecs), vals[..., None] * vecs)
    _close(vecs @ vecs.transpose(-1, -2), torch.eye(d, dtype=F64).expand(o, d, d))
    # Q = sum_k lambda_k v_k v_k^T
    _close(torch.einsum("ok,oki,okj->oij", vals, vecs, vecs), q)
    # the same spectrum as eigh, just reordered
    ref = torch.linalg.eigvalsh(q)
    _close(vals.sort(-1).values, ref)


def test_eigendecompose_orders_differ_when_negative_eigenvalues_dominate():
    q = torch.diag(torch.tensor([1.0, -5.0, 3.0, -0.5], dtype=F64))
    vals_m, vecs_m = analysis.eigendecompose(q, "magnitude")
    vals_s, vecs_s = analysis.eigendecompose(q, "signed")
    assert vals_m.tolist() == [-5.0, 3.0, 1.0, -0.5]
    assert vals_s.tolist() == [3.0, 1.0, -0.5, -5.0]
    torch.testing.assert_close(vecs_m.abs(), torch.eye(4, dtype=F64)[[1, 2, 0, 3]], rtol=0, atol=1e-15)
    torch.testing.assert_close(vecs_s.abs(), torch.eye(4, dtype=F64)[[2, 0, 3, 1]], rtol=0, atol=1e-15)
    with pytest.raises(ValueError, match="order"):
        analysis.eigendecompose(q, "ascending")


def test_eigendecompose_symmetrizes_its_input():
    q = _sym_matrices(2, 5, seed=9)
    skew = torch.randn(2, 5, 5, generator=_gen(10), dtype=F64)
    skew = skew - skew.transpose(-1, -2)
    v1, e1 = analysis.eigendecompose(q)
    v2, e2 = analysis.eigendecompose(q + skew)
    _close(v2, v1)
    _close((e2 * e1).sum(-1).abs(), torch.ones(2, 5, dtype=F64), rel=1e-10)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("d, h, o", SHAPES)
def test_quadratic_form_with_all_eigenpairs_is_the_layer(d, h, o, seed):
    w, v, u = _weights(d, h, o, seed)
    z = torch.randn(11, d, generator=_gen(seed + 400), dtype=F64)
    vals, vecs = analysis.eigendecompose(analysis.interaction_matrices(w, v, u))
    logits = analysis.quadratic_form(vals, vecs, z)
    assert logits.shape == (11, o)
    _close(logits, ((z @ w.T) * (z @ v.T)) @ u.T)  # u_o . g(z) for every one-hot u


# ---------------------------------------------------------------- truncation
@pytest.mark.parametrize("o, d", [(3, 6), (10, 12)])
def test_truncation_error_is_eckart_young(o, d):
    q = _sym_matrices(o, d, seed=o + 5 * d)
    vals, vecs = analysis.eigendecompose(q, "magnitude")
    errors = []
    for k in range(d + 1):
        tv, te = analysis.truncate(vals, vecs, k)
        assert tv.shape == (o, k) and te.shape == (o, k, d)
        approx = torch.einsum("ok,oki,okj->oij", tv, te, te)
        err = torch.linalg.matrix_norm(q - approx)  # Frobenius, per output
        dropped = vals[:, k:].pow(2).sum(-1).sqrt()
        _close(err, dropped, rel=1e-10)
        # no rank-k matrix does better: sqrt of the sum of the dropped squared singular values
        sv = torch.linalg.svdvals(q)
        _close(err, sv[:, k:].pow(2).sum(-1).sqrt(), rel=1e-10)
        errors.append(err)
    errors = torch.stack(errors)  # (k, o)
    assert torch.all(errors[1:] <= errors[:-1] + 1e-12), "truncation error increased with k"
    assert torch.all(errors[-1] < 1e-10) and torch.all(errors[0] > 0)


def test_signed_order_truncates_worse_than_magnitude():
    """Truncation needs the magnitude order; the signed order drops large negative eigenvalues first."""
    q = _sym_matrices(4, 8, seed=77)
    errs = {}
    for order in ("magnitude", "signed"):
        vals, vecs = analysis.eigendecompose(q, order)
        tv, te = analysis.truncate(vals, vecs, 2)
        errs[order] = torch.linalg.matrix_norm(q - torch.einsum("ok,oki,okj->oij", tv, te, te))
    assert torch.all(errs["magnitude"] <= errs["signed"] + 1e-12)
    assert torch.any(errs["magnitude"] < errs["signed"] - 1e-6)


@pytest.mark.parametrize("seed", SEEDS)
def test_truncated_quadratic_form_converges_to_logits(seed):
    w, v, u = _weights(8, 16, 10, seed)
    z = torch.randn(50, 8, generator=_gen(seed + 500), dtype=F64)
    exact = ((z @ w.T) * (z @ v.T)) @ u.T
    vals, vecs = analysis.eigendecompose(analysis.interaction_matrices(w, v, u))
    errs = [(analysis.quadratic_form(*analysis.truncate(vals, vecs, k), z) - exact).norm() for k in range(9)]
    assert errs[0] > 1.0 and errs[-1] < 1e-10 * exact.norm()


# ---------------------------------------------------------------- projection, HOSVD, effective rank
@pytest.mark.parametrize("o, k, d, p", [(1, 3, 4, 9), (10, 5, 8, 20)])
def test_project_to_input_preserves_dot_products(o, k, d, p):
    g = _gen(o * k + d + p)
    vecs = torch.randn(o, k, d, generator=g, dtype=F64)
    embed = torch.randn(d, p, generator=g, dtype=F64)  # E: pixels -> embedding, as nn.Linear.weight
    x = torch.randn(6, p, generator=g, dtype=F64)
    proj = analysis.project_to_input(vecs, embed)
    assert proj.shape == (o, k, p)
    lhs = torch.einsum("okd,nd->nok", vecs, x @ embed.T)  # v . (E x)
    rhs = torch.einsum("okp,np->nok", proj, x)  # v~ . x
    _close(rhs, lhs)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("d, h, o", [(3, 4, 2), (5, 6, 10), (4, 7, 16)])
def test_hosvd_reconstructs_and_has_symmetric_components(d, h, o, seed):
    w, v, u = _weights(d, h, o, seed)
    b = analysis.bilinear_tensor(w, v, u, symmetric=True)
    uu, s, q = analysis.hosvd(b)
    r = min(o, d * d)
    assert uu.shape == (o, r) and s.shape == (r,) and q.shape == (r, d, d)
    assert torch.all(s[:-1] >= s[1:]) and torch.all(s >= 0)
    _close(torch.einsum("ok,k,kij->oij", uu, s, q), b)
    _close(uu.T @ uu, torch.eye(r, dtype=F64))
    _close(torch.einsum("kij,lij->kl", q, q), torch.eye(r, dtype=F64))
    # components with non-zero weight lie in the span of the h symmetric matrices sym(w_h v_h^T)
    live = s > 1e-10 * s[0]
    assert live.sum() == min(o, h, d * (d + 1) // 2)
    ql = q[live]
    _close(ql, ql.transpose(-1, -2), rel=1e-10)
    # an unsymmetrized B has non-symmetric components: the symmetrization above is what makes them symmetric
    _, s_raw, q_raw = analysis.hosvd(analysis.bilinear_tensor(w, v, u))
    assert (q_raw[0] - q_raw[0].T).abs().max() > 1e-6


@pytest.mark.parametrize("n", [1, 2, 7, 100])
def test_effective_rank(n):
    equal = torch.full((n,), 0.3, dtype=F64)
    torch.testing.assert_close(analysis.effective_rank(equal), torch.tensor(float(n), dtype=F64), rtol=REL, atol=0)
    one_hot = torch.zeros(n + 3, dtype=F64)
    one_hot[n // 2] = -4.0
    torch.testing.assert_close(analysis.effective_rank(one_hot), torch.tensor(1.0, dtype=F64), rtol=REL, atol=0)
    a = torch.randn(5, n, generator=_gen(n), dtype=F64)
    er = analysis.effective_rank(a)
    assert er.shape == (5,)
    assert torch.all(er >= 1 - 1e-12) and torch.all(er <= n + 1e-12)
    for c in (1e-6, -3.0, 1e5):  # scale (and sign) invariant
        _close(analysis.effective_rank(c * a), er)
    _close(analysis.effective_rank(a.T, dim=0), er)


def test_effective_rank_between_extremes():
    a = torch.tensor([3.0, 1.0, 0.0, 0.0], dtype=F64)  # (4 / sqrt 10)^2 = 1.6
    torch.testing.assert_close(analysis.effective_rank(a), torch.tensor(1.6, dtype=F64), rtol=REL, atol=0)


# ---------------------------------------------------------------- bias augmentation
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("d, h, o", SHAPES)
def test_augmented_bias_reproduces_biased_bilinear_layer(d, h, o, seed):
    torch.manual_seed(seed)
    layer = Bilinear(d, h, bias=True).double()
    with torch.no_grad():
        layer.proj.bias.copy_(torch.randn(2 * h, generator=_gen(seed + 600), dtype=F64))
    u = torch.randn(o, h, generator=_gen(seed + 700), dtype=F64)
    x = torch.randn(9, d, generator=_gen(seed + 800), dtype=F64)
    w_aug = analysis.augment_bias(layer.left.detach(), layer.left_bias.detach())
    v_aug = analysis.augment_bias(layer.right.detach(), layer.right_bias.detach())
    assert w_aug.shape == (h, d + 1)
    x_aug = analysis.append_one(x)
    assert x_aug.shape == (9, d + 1) and torch.all(x_aug[:, -1] == 1) and torch.equal(x_aug[:, :d], x)
    _close(x_aug @ w_aug.T, x @ layer.left.T + layer.left_bias)  # W' x' = W x + b
    # the bias-free bilinear layer on x' is the biased one on x ...
    _close(((x_aug @ w_aug.T) * (x_aug @ v_aug.T)), layer(x).detach())
    # ... so the interaction matrices on x' give the outputs exactly
    q = analysis.interaction_matrices(w_aug, v_aug, u)
    _close(torch.einsum("ni,oij,nj->no", x_aug, q, x_aug), layer(x).detach() @ u.T)
    # and dropping the bias column would not (the constant coordinate carries the linear terms)
    q_nobias = analysis.interaction_matrices(layer.left.detach(), layer.right.detach(), u)
    assert not torch.allclose(torch.einsum("ni,oij,nj->no", x, q_nobias, x), layer(x).detach() @ u.T)


def test_augment_bias_none_is_zero_column():
    w = torch.randn(3, 4, dtype=F64)
    aug = analysis.augment_bias(w, None)
    assert aug.shape == (3, 5) and torch.equal(aug[:, :4], w) and torch.count_nonzero(aug[:, 4]) == 0
    x = torch.randn(2, 5, 4, dtype=F64)
    assert analysis.append_one(x).shape == (2, 5, 5)


# ---------------------------------------------------------------- similarity
def test_top_eigenvector_similarity():
    g = _gen(11)
    a = torch.randn(3, 5, 8, generator=g, dtype=F64)
    ones = torch.ones(3, 5, dtype=F64)
    _close(analysis.top_eigenvector_similarity(a, a), ones)
    _close(analysis.top_eigenvector_similarity(a, -2.5 * a), ones)  # sign and scale invariant
    signs = torch.where(torch.rand(3, 5, 1, generator=g) > 0.5, 1.0, -1.0).double()
    _close(analysis.top_eigenvector_similarity(a, signs * a), ones)
    b = torch.randn(3, 5, 8, generator=g, dtype=F64)
    sim = analysis.top_eigenvector_similarity(a, b)
    cos = torch.nn.functional.cosine_similarity(a, b, dim=-1).abs()
    _close(sim, cos)
    assert torch.all(sim < 1 - 1e-6)
    e = torch.eye(4, dtype=F64)
    _close(analysis.top_eigenvector_similarity(e, e.roll(1, 0)), torch.zeros(4, dtype=F64))


# ---------------------------------------------------------------- the paper's model
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("d_input, d_hidden, n_classes", [(20, 8, 10), (12, 16, 3)])
def test_image_classifier_interaction_matrices_reproduce_logits(bias, d_input, d_hidden, n_classes):
    ImageClassifier = _load_image_classifier()
    torch.manual_seed(d_input + d_hidden)
    model = ImageClassifier(d_input=d_input, d_hidden=d_hidden, n_classes=n_classes, bias=bias).double()
    if bias:
        with torch.no_grad():
            model.mixer.proj.bias.copy_(torch.randn(2 * d_hidden, generator=_gen(1), dtype=F64))
    x = torch.rand(16, d_input, generator=_gen(2), dtype=F64)
    q = model.interaction_matrices()
    dim = d_hidden + 1 if bias else d_hidden
    assert q.shape == (n_classes, dim, dim) and q.dtype == F64
    z = x @ model.embed.weight.T
    zz = analysis.append_one(z) if bias else z
    with torch.no_grad():
        logits = model(x)
    _close(torch.einsum("ni,oij,nj->no", zz, q, zz), logits)
    vals, vecs = analysis.eigendecompose(q)
    _close(analysis.quadratic_form(vals, vecs, zz), logits)
    if not bias:  # eigen() projects to pixels: (v . E x) = (v~ . x)
        pvals, pvecs = model.eigen()
        assert pvecs.shape == (n_classes, d_hidden, d_input)
        _close(analysis.quadratic_form(pvals, pvecs, x), logits)


def test_image_classifier_interaction_matrices_only_for_bilinear():
    ImageClassifier = _load_image_classifier()
    for layer in ("reglu", "relu"):
        with pytest.raises(ValueError, match="bilinear"):
            ImageClassifier(d_input=6, d_hidden=4, layer=layer).interaction_matrices()


@pytest.mark.parametrize("seed", SEEDS)
def test_reorder_matches_a_fresh_decomposition(seed):
    q = analysis.symmetrize(torch.randn(3, 9, 9, generator=_gen(seed + 900), dtype=F64))
    vals, vecs = analysis.eigendecompose(q, order="magnitude")
    for order in ("signed", "magnitude"):
        ref_vals, ref_vecs = analysis.eigendecompose(q, order=order)
        got_vals, got_vecs = analysis.reorder(vals, vecs, order)
        torch.testing.assert_close(got_vals, ref_vals, rtol=0, atol=0)
        torch.testing.assert_close(got_vecs, ref_vecs, rtol=0, atol=0)
    with pytest.raises(ValueError):
        analysis.reorder(vals, vecs, "ascending")
