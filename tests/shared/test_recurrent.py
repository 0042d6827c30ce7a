"""shared.nn.recurrent.BilinearRNN against its formulas, written out by hand (float64 reference checks)."""
import math

import pytest
import torch

from shared.nn.recurrent import VARIANTS, BilinearRNN

D, H, T = 3, 6, 7
RANK, BLOCK = 3, 2
TOL = dict(rtol=1e-12, atol=1e-12)
SEQ_TOL = dict(rtol=1e-10, atol=1e-10)


def _model(variant, additive=False, seed=0, d_hidden=H):
    torch.manual_seed(seed)
    model = BilinearRNN(D, d_hidden, variant, rank=RANK if variant == "cp" else None,
                        block=BLOCK if variant == "block" else None, additive=additive).double()
    if additive:  # nn.Linear's init is small; O(1) input weights and bias so that a dropped term cannot hide
        g = torch.Generator().manual_seed(seed + 100)
        with torch.no_grad():
            model.input.weight.copy_(torch.randn(model.input.weight.shape, generator=g, dtype=torch.float64))
            model.input.bias.copy_(torch.randn(model.input.bias.shape, generator=g, dtype=torch.float64))
    return model


def _inputs(*shape, seed=1):
    return torch.randn(*shape, D, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))


def _matrices_by_hand(model, x):
    """A(x) (N, H, H) from each variant's definition, written independently of the module's code paths."""
    n, h = len(x), model.d_hidden
    v = model.variant
    if v == "full":  # A(x) = sum_k x_k W_k
        return torch.einsum("nk,kij->nij", x, model.weight)
    if v == "cp":  # A(x) = L diag(M^T x) R^T
        return torch.stack([model.left @ torch.diag(model.mix.T @ xi) @ model.right.T for xi in x])
    out = torch.zeros(n, h, h, dtype=x.dtype)
    if v == "block":  # block-diagonal, block j = sum_k x_k W[k, j]
        b = model.block
        for j in range(h // b):
            out[:, j * b : (j + 1) * b, j * b : (j + 1) * b] = torch.einsum("nk,kab->nab", x, model.weight[:, j])
        return out
    if v == "rotation":  # pairs (h[2j], h[2j+1]) rotated by t_j = x . angle[:, j]
        theta = x @ model.angle
        for j in range(h // 2):
            c, s = torch.cos(theta[:, j]), torch.sin(theta[:, j])
            out[:, 2 * j, 2 * j], out[:, 2 * j, 2 * j + 1] = c, -s
            out[:, 2 * j + 1, 2 * j], out[:, 2 * j + 1, 2 * j + 1] = s, c
        return out
    if v == "diagonal":
        return torch.diag_embed(x @ model.weight)
    assert v == "positive"
    return torch.diag_embed(1.0 / (1.0 + torch.exp(-(x @ model.weight))))


def _recurrence_by_hand(model, x):
    """The unnormalized recurrence h_t = A(x_t) h_{t-1} (+ B x_t + b), from h0, in float64, one sequence at a time."""
    units, log_norms = [], []
    for seq in x:
        h = model.h0.detach().clone()
        u_seq, n_seq = [], []
        for xt in seq:
            h = _matrices_by_hand(model, xt[None])[0] @ h
            if model.additive:
                h = h + model.input.weight @ xt + model.input.bias
            u_seq.append(h / torch.sqrt((h * h).sum()))
            n_seq.append(0.5 * torch.log((h * h).sum()))
        units.append(torch.stack(u_seq))
        log_norms.append(torch.stack(n_seq))
    return torch.stack(units).detach(), torch.stack(log_norms).detach()


# ---------------------------------------------------------------- transition matrices
def test_variants_are_the_six_of_the_paper():
    assert VARIANTS == ("full", "cp", "block", "rotation", "diagonal", "positive")


@pytest.mark.parametrize("variant", VARIANTS)
def test_parameter_shapes(variant):
    model = _model(variant)
    shapes = {k: tuple(p.shape) for k, p in model.named_parameters()}
    expected = {"full": {"weight": (D, H, H)}, "cp": {"left": (H, RANK), "right": (H, RANK), "mix": (D, RANK)},
                "block": {"weight": (D, H // BLOCK, BLOCK, BLOCK)}, "rotation": {"angle": (D, H // 2)},
                "diagonal": {"weight": (D, H)}, "positive": {"weight": (D, H)}}[variant]
    assert shapes == {**expected, "h0": (H,)}
    additive = _model(variant, additive=True)
    assert dict(additive.named_parameters())["input.weight"].shape == (H, D)
    assert dict(additive.named_parameters())["input.bias"].shape == (H,)


@pytest.mark.parametrize("variant", VARIANTS)
def test_matrices_applied_to_h_equal_transition(variant):
    model = _model(variant)
    x = _inputs(5)
    h = torch.randn(5, H, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    A = model.matrices(x)
    assert A.shape == (5, H, H) and A.dtype == torch.float64
    with torch.no_grad():
        torch.testing.assert_close(torch.einsum("nij,nj->ni", A, h), model.transition(x, h), **TOL)


@pytest.mark.parametrize("variant", VARIANTS)
def test_matrices_match_formula(variant):
    model = _model(variant)
    x = _inputs(5)
    with torch.no_grad():
        torch.testing.assert_close(model.matrices(x), _matrices_by_hand(model, x), **TOL)


def test_full_is_linear_in_x():
    """A(a x + b y) = a A(x) + b A(y): the transition is linear in the input (no bias)."""
    model = _model("full")
    x, y = _inputs(4, seed=3), _inputs(4, seed=4)
    expected = 2.0 * model.matrices(x) - 3.0 * model.matrices(y)
    torch.testing.assert_close(model.matrices(2.0 * x - 3.0 * y), expected, **TOL)


def test_block_is_block_diagonal():
    model = _model("block")
    A = model.matrices(_inputs(8))
    mask = torch.block_diag(*[torch.ones(BLOCK, BLOCK, dtype=torch.bool)] * (H // BLOCK))
    assert (A[:, ~mask] == 0).all()
    assert (A[:, mask] != 0).all()  # the blocks themselves are generic


def test_rotation_is_orthogonal_with_unit_determinant_blocks_and_commutes():
    model = _model("rotation")
    A = model.matrices(_inputs(6))
    eye = torch.eye(H, dtype=torch.float64).expand(6, H, H)
    torch.testing.assert_close(A.transpose(1, 2) @ A, eye, **TOL)
    for j in range(H // 2):
        blk = A[:, 2 * j : 2 * j + 2, 2 * j : 2 * j + 2]
        torch.testing.assert_close(torch.linalg.det(blk), torch.ones(6, dtype=torch.float64), **TOL)
        other = A[:, 2 * j : 2 * j + 2].clone()
        other[:, :, 2 * j : 2 * j + 2] = 0
        assert (other == 0).all()  # nothing outside the 2x2 block
    for i in range(6):
        for k in range(6):
            torch.testing.assert_close(A[i] @ A[k], A[k] @ A[i], **TOL)


def test_full_matrices_do_not_commute():
    """Control for the commutation check above: a generic full model's transitions do not commute."""
    A = _model("full").matrices(_inputs(2))
    assert not torch.allclose(A[0] @ A[1], A[1] @ A[0], atol=1e-6)


@pytest.mark.parametrize("variant", ["diagonal", "positive"])
def test_diagonal_variants_are_diagonal(variant):
    A = _model(variant).matrices(_inputs(8) * 3)
    off = A - torch.diag_embed(torch.diagonal(A, dim1=1, dim2=2))
    assert (off == 0).all()
    diag = torch.diagonal(A, dim1=1, dim2=2)
    if variant == "positive":
        assert ((diag > 0) & (diag < 1)).all()
    else:  # real diagonal: signs can flip
        assert (diag < 0).any() and (diag > 0).any()


# ---------------------------------------------------------------- the recurrence
@pytest.mark.parametrize("additive", [False, True])
@pytest.mark.parametrize("variant", VARIANTS)
def test_exact_forward_equals_unnormalized_recurrence(variant, additive):
    model = _model(variant, additive)
    x = _inputs(4, T)
    units, log_norm = model(x, mode="exact")
    assert units.shape == (4, T, H) and log_norm.shape == (4, T)
    ref_units, ref_log_norm = _recurrence_by_hand(model, x)
    torch.testing.assert_close(units.detach(), ref_units, **SEQ_TOL)
    torch.testing.assert_close(log_norm.detach(), ref_log_norm, **SEQ_TOL)
    torch.testing.assert_close(units.detach().norm(dim=-1), torch.ones(4, T, dtype=torch.float64), **SEQ_TOL)


@pytest.mark.parametrize("variant", VARIANTS)
def test_pure_model_is_scale_invariant_in_h0(variant):
    model = _model(variant)
    x = _inputs(3, T)
    units, log_norm = model(x)
    with torch.no_grad():
        model.h0.mul_(1e3)
    units_big, log_norm_big = model(x)
    torch.testing.assert_close(units_big, units, **SEQ_TOL)
    torch.testing.assert_close(log_norm_big, log_norm + math.log(1e3), **SEQ_TOL)


@pytest.mark.parametrize("variant", VARIANTS)
def test_additive_model_is_not_scale_invariant(variant):
    """Control for the test above: with B x + b the direction of h_t does depend on |h_0|."""
    model = _model(variant, additive=True)
    x = _inputs(3, T)
    units, _ = model(x)
    with torch.no_grad():
        model.h0.mul_(1e3)
    assert not torch.allclose(model(x)[0], units, atol=1e-3)


@pytest.mark.parametrize("variant", VARIANTS)
def test_modes_agree_for_pure_models(variant):
    model = _model(variant)
    x = _inputs(3, T)
    exact, log_exact = model(x, mode="exact")
    for mode in ("renormalize", "plain"):
        torch.testing.assert_close(model(x, mode=mode)[0], exact, **SEQ_TOL)
    # plain carries the real scale, so its log-norm is the exact one; renormalize keeps only the last step's
    torch.testing.assert_close(model(x, mode="plain")[1], log_exact, **SEQ_TOL)


@pytest.mark.parametrize("variant", VARIANTS)
def test_modes_for_additive_models(variant):
    model = _model(variant, additive=True)
    x = _inputs(3, T)
    exact, log_exact = model(x, mode="exact")
    plain, log_plain = model(x, mode="plain")
    renormalized, _ = model(x, mode="renormalize")
    torch.testing.assert_close(plain, exact, **SEQ_TOL)  # unnormalized in float64: exact for short sequences
    torch.testing.assert_close(log_plain, log_exact, **SEQ_TOL)
    assert not torch.allclose(renormalized, exact, atol=1e-3)  # dropping the scale changes the function


def test_unknown_mode_is_rejected():
    with pytest.raises(ValueError, match="mode"):
        _model("full")(_inputs(1, 2), mode="fast")


def _scaled_full(additive=False):
    """A full model whose transitions grow |h| about tenfold per step (float32, the dtype it trains in)."""
    torch.manual_seed(0)
    model = BilinearRNN(D, H, "full", additive=additive)
    with torch.no_grad():
        model.weight.mul_(10.0)
    return model


@pytest.mark.parametrize("additive", [False, True])
def test_exact_mode_does_not_overflow_at_length_2000(additive):
    model = _scaled_full(additive)
    tokens = torch.randint(D, (2, 2000), generator=torch.Generator().manual_seed(5))
    x = torch.nn.functional.one_hot(tokens, D).float()
    with torch.no_grad():
        units, log_norm = model(x, mode="exact")
        plain_units, plain_log_norm = model(x, mode="plain")
    assert torch.isfinite(units).all() and torch.isfinite(log_norm).all()
    assert log_norm[:, -1].min() > 2000 * math.log(2.0)  # |h_2000| far beyond float32's 3.4e38 (log 88.7)
    torch.testing.assert_close(units.norm(dim=-1), torch.ones(2, 2000), rtol=1e-5, atol=1e-5)
    assert not torch.isfinite(plain_units).all() and not torch.isfinite(plain_log_norm).all()
    # before the overflow the two agree
    torch.testing.assert_close(plain_units[:, :10], units[:, :10], rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------- constructor
@pytest.mark.parametrize("kwargs, match", [
    (dict(variant="dense"), "variant must be one of"),
    (dict(variant="cp"), "rank"),
    (dict(variant="cp", rank=0), "rank"),
    (dict(variant="block"), "block"),
    (dict(variant="block", block=4), "divides"),
    (dict(variant="rotation", d_hidden=5), "even"),
])
def test_constructor_rejects_bad_settings(kwargs, match):
    kwargs = {"d_input": D, "d_hidden": H, **kwargs}
    with pytest.raises(ValueError, match=match):
        BilinearRNN(**kwargs)


def test_exact_mode_stays_exact_when_the_additive_state_is_tiny():
    """A contracting additive model with a tiny drive: |h_t| settles near |B x + b| / (1 - |A|) ~ e^-115."""
    torch.manual_seed(0)
    model = BilinearRNN(D, 4, "full", additive=True).double()
    with torch.no_grad():
        model.weight.mul_(0.05)
        model.input.weight.mul_(1e-50)
        model.input.bias.mul_(1e-50)
    tokens = torch.randint(D, (2, 60), generator=torch.Generator().manual_seed(6))
    x = torch.nn.functional.one_hot(tokens, D).double()
    units, log_norm = model(x, mode="exact")
    ref_units, ref_log_norm = _recurrence_by_hand(model, x)
    assert ref_log_norm.min() < -100  # the true state is representable in float64 (|h| ~ 1e-50)
    torch.testing.assert_close(log_norm.detach(), ref_log_norm, rtol=1e-8, atol=1e-8)
    torch.testing.assert_close(units.detach(), ref_units, rtol=1e-8, atol=1e-8)
