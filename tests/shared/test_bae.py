"""shared.nn.bae: closed-form lifted errors against the explicit d x d computation, density, and the manifold analysis."""
import pytest
import torch

from shared.nn.bae import (
    KINDS,
    BilinearAutoencoder,
    composite_form,
    effective_dimension,
    mixing_gram,
    top_subspace,
)


TOL = dict(rtol=1e-10, atol=1e-10)
D, N, B = 6, 10, 8


def _model(kind, seed=0):
    torch.manual_seed(seed)
    model = BilinearAutoencoder(D, N, kind, bottleneck=B if kind in ("mixed", "combined") else None).double()
    with torch.no_grad():  # off the orthogonal init, so no identity hides a wrong index
        for p in model.parameters():
            p.add_(0.3 * torch.randn_like(p))
    return model


def _inputs(batch=7, seed=1):
    torch.manual_seed(seed)
    return BilinearAutoencoder.normalize(torch.randn(batch, D, dtype=torch.float64))


@pytest.mark.parametrize("kind", KINDS)
def test_lifted_error_matches_explicit_prefix_average(kind):
    model, x = _model(kind), _inputs()
    with torch.no_grad():
        if model.ordered:  # uniform average over all n prefixes
            explicit = torch.stack([model.explicit_error(x, k) for k in range(1, N + 1)]).mean(0)
        else:
            explicit = model.explicit_error(x)
        torch.testing.assert_close(model.lifted_error(x), explicit, **TOL)


@pytest.mark.parametrize("kind", KINDS)
def test_prefix_reconstruction_errors_match_explicit(kind):
    model, x = _model(kind), _inputs()
    ks = [1, 2, 5, N]
    with torch.no_grad():
        explicit = torch.stack([model.explicit_error(x, k) for k in ks])
        torch.testing.assert_close(torch.stack([model.reconstruction_error(x, k) for k in ks]), explicit, **TOL)
        torch.testing.assert_close(model.prefix_errors(x, ks), explicit, **TOL)
        torch.testing.assert_close(model.reconstruction_error(x), model.explicit_error(x), **TOL)
        if not model.ordered:  # for the unordered kinds training and evaluation measure the same thing
            torch.testing.assert_close(model.reconstruction_error(x), model.lifted_error(x), **TOL)


def test_mixed_cross_term_is_bottleneck_norm():
    model, x = _model("mixed"), _inputs()
    with torch.no_grad():
        f = model.latents(x)
        c = model.coefficients(f)
        torch.testing.assert_close((c * f).sum(-1), (f @ model.down.T).pow(2).sum(-1), **TOL)
        torch.testing.assert_close(c, f @ model.down.T @ model.down, **TOL)


@pytest.mark.parametrize("kind", KINDS)
def test_zero_model_has_unit_error(kind):
    model, x = _model(kind), _inputs()
    with torch.no_grad():
        model.left.zero_()
        model.right.zero_()
        ones = torch.ones(len(x), dtype=torch.float64)
        torch.testing.assert_close(model.lifted_error(x), ones, **TOL)
        torch.testing.assert_close(model.reconstruction_error(x), ones, **TOL)


@pytest.mark.parametrize("kind", KINDS)
def test_quadratic_forms_give_latents(kind):
    model, x = _model(kind), _inputs()
    Q = model.quadratic_forms()
    torch.testing.assert_close(Q, Q.transpose(-1, -2), **TOL)
    with torch.no_grad():
        torch.testing.assert_close(torch.einsum("bd,jde,be->bj", x, Q, x), model.latents(x), **TOL)
        torch.testing.assert_close(model.quadratic_forms([3, 1]), Q[[3, 1]], **TOL)


def test_hoyer_density_extremes_and_scale_invariance():
    f = torch.zeros(16, 4, dtype=torch.float64)
    f[5, 0] = 2.0  # one active sample
    f[:, 1] = torch.tensor([1.0, -1.0]).repeat(8)  # same magnitude everywhere
    f[:, 2] = torch.randn(16, dtype=torch.float64)  # column 3 stays all-zero
    h = BilinearAutoencoder.hoyer_density(f)
    torch.testing.assert_close(h[:2], torch.tensor([0.0, 1.0], dtype=torch.float64), **TOL)
    assert 0 < h[2] < 1 and h[3] == 0
    torch.testing.assert_close(BilinearAutoencoder.hoyer_density(37.0 * f), h, **TOL)
    f.requires_grad_(True)
    BilinearAutoencoder.hoyer_density(f).sum().backward()
    assert torch.isfinite(f.grad).all()  # the all-zero column does not poison the gradient


def test_ordered_density_penalty_is_prefix_average():
    for kind in ("ordered", "combined"):
        model = _model(kind)
        f = torch.randn(32, N, dtype=torch.float64)
        h = model.hoyer_density(f)
        explicit = torch.stack([h[:k].mean() for k in range(1, N + 1)]).mean()
        torch.testing.assert_close(model.density_penalty(f), explicit, **TOL)
    model = _model("vanilla")
    torch.testing.assert_close(model.density_penalty(f), model.hoyer_density(f).mean(), **TOL)


@pytest.mark.parametrize("kind", KINDS)
def test_loss_normalises_and_adds_weighted_penalty(kind):
    model = _model(kind)
    torch.manual_seed(2)
    a = 5.0 * torch.randn(20, D, dtype=torch.float64)  # raw activations, not unit norm
    x = model.normalize(a)
    total, metrics = model.loss(a, alpha=0.3, warmup=0.5)
    f = model.latents(x)
    torch.testing.assert_close(metrics["error"], model.lifted_error(x).mean(), **TOL)
    torch.testing.assert_close(metrics["density"], model.hoyer_density(f).mean(), **TOL)
    torch.testing.assert_close(total, model.lifted_error(x).mean() + 0.15 * model.density_penalty(f), **TOL)
    torch.testing.assert_close(model.loss(a)[0], metrics["error"], **TOL)
    total.backward()
    assert all(torch.isfinite(p.grad).all() for p in model.parameters())


@pytest.mark.parametrize("kind", KINDS)
def test_init_is_orthogonal_and_prefix_weights(kind):
    torch.manual_seed(0)
    model = BilinearAutoencoder(D, N, kind, bottleneck=B if kind in ("mixed", "combined") else None)
    eye = torch.eye(D)
    for w in (model.left, model.right):  # n > d: orthonormal columns
        torch.testing.assert_close(w.T @ w, eye, rtol=1e-5, atol=1e-5)
    assert not torch.allclose(model.left, model.right)  # drawn independently
    assert all("bias" not in name for name, _ in model.named_parameters())
    if model.mixed:  # b < n: orthonormal rows
        torch.testing.assert_close(model.down @ model.down.T, torch.eye(B), rtol=1e-5, atol=1e-5)
    else:
        assert not hasattr(model, "down")
    if model.ordered:
        torch.testing.assert_close(model.weights, torch.tensor([(N - j + 1) / N for j in range(1, N + 1)]))
        tail = torch.tensor([sum(1 / k for k in range(j, N + 1)) for j in range(1, N + 1)])
        torch.testing.assert_close(model.tail, tail)
    assert BilinearAutoencoder(D, N, "mixed").down.shape == (2 * D, N)


def test_bad_arguments():
    with pytest.raises(ValueError):
        BilinearAutoencoder(D, N, "topk")
    with pytest.raises(ValueError):
        BilinearAutoencoder(D, N, "vanilla", bottleneck=4)
    with pytest.raises(ValueError):
        mixing_gram(_model("ordered"))


def test_mixing_gram_and_composite_form():
    model = _model("combined")
    G = mixing_gram(model)
    torch.testing.assert_close(G, G.T, **TOL)
    torch.testing.assert_close(G.diagonal(), torch.ones(N, dtype=torch.float64), **TOL)
    dims = effective_dimension(G)
    assert dims.shape == (N,) and (dims >= 1 - 1e-12).all() and (dims <= N + 1e-12).all()
    Q, members = composite_form(model, 4, G, neighbours=3)
    assert len(members) == 3 and 4 in members.tolist()
    assert G[4, members].abs().min() >= G[4, [j for j in range(N) if j not in members.tolist()]].abs().max()
    torch.testing.assert_close(Q, Q.T, **TOL)
    assert torch.linalg.matrix_rank(Q) <= 2 * 3
    expected = sum(G[4, j].abs() * model.quadratic_forms([j])[0] for j in members.tolist())
    torch.testing.assert_close(Q, expected, **TOL)
    signed, same_members = composite_form(model, 4, G, neighbours=3, signed=True)
    assert same_members.tolist() == members.tolist()
    torch.testing.assert_close(signed, sum(G[4, j] * model.quadratic_forms([j])[0] for j in members.tolist()), **TOL)


def test_composite_form_on_a_hand_built_case_under_both_conventions():
    """d = 3, n = 3: f_0 = x_1^2, f_1 = x_2^2, f_2 = x_1 x_3; unit bottleneck columns (1, 0), (-0.6, 0.8), (0, 1)
    (stored at norms 1, 2, 3: the Gram normalises them), so G_10 = -0.6, G_12 = 0.8. Latent 1's form over all three:
    |G| (the released analysis): Q_1 + 0.8 Q_2 + 0.6 Q_0; signed: Q_1 + 0.8 Q_2 - 0.6 Q_0. Worked out by hand, the
    (x_1, x_3) block [[+-0.6, 0.4], [0.4, 0]] has eigenvalues 0.8, -0.2 (|G|) and -0.8, 0.2 (signed), with the
    second-largest |eigenvalue| along (2, 1)/sqrt5 and (2, -1)/sqrt5."""
    model = BilinearAutoencoder(3, 3, "mixed", bottleneck=2).double().requires_grad_(False)
    e = torch.eye(3, dtype=torch.float64)
    model.left.copy_(torch.stack([e[0], e[1], e[0]]))
    model.right.copy_(torch.stack([e[0], e[1], e[2]]))
    model.down.copy_(torch.tensor([[1.0, -1.2, 0.0], [0.0, 1.6, 3.0]], dtype=torch.float64))
    G = mixing_gram(model)
    torch.testing.assert_close(G[1], torch.tensor([-0.6, 1.0, 0.8], dtype=torch.float64), **TOL)
    for signed, corner, second in ((False, 0.6, 0.8), (True, -0.6, -0.8)):
        Q, members = composite_form(model, 1, G, neighbours=3, signed=signed)
        assert members.tolist() == [1, 2, 0]
        by_hand = torch.tensor([[corner, 0, 0.4], [0, 1, 0], [0.4, 0, 0]], dtype=torch.float64)
        torch.testing.assert_close(Q, by_hand, **TOL)
        values, vectors = top_subspace(Q, k=2)
        torch.testing.assert_close(values, torch.tensor([1.0, second], dtype=torch.float64), **TOL)
        direction = torch.tensor([2.0, 0.0, -1.0 if signed else 1.0], dtype=torch.float64) / 5**0.5
        torch.testing.assert_close(vectors[:, 1] * vectors[0, 1].sign(), direction, **TOL)  # up to its sign
        # x^T Q x is the weighted sum of the members' latents: the composite latent the form reads
        x = BilinearAutoencoder.normalize(torch.tensor([[1.0, -2.0, 0.5], [0.3, 0.2, -1.0]], dtype=torch.float64))
        weights = torch.tensor([1.0, 0.8, corner], dtype=torch.float64)
        torch.testing.assert_close(torch.einsum("bd,de,be->b", x, Q, x), model.latents(x)[:, [1, 2, 0]] @ weights,
                                   **TOL)


def test_top_subspace_recovers_planted_manifold():
    """Latents 0..2 are (u_k . x)^2 for orthonormal u_k and share one bottleneck direction; the rest are random and
    orthogonal to it in the bottleneck. The composite form of latent 0 is then sum_k u_k u_k^T, whose top-3
    eigenvectors span the planted u's."""
    torch.manual_seed(3)
    model = BilinearAutoencoder(D, N, "mixed", bottleneck=12).double()
    u = torch.linalg.qr(torch.randn(D, 3, dtype=torch.float64)).Q.T  # (3, d) orthonormal rows
    basis = torch.linalg.qr(torch.randn(12, 12, dtype=torch.float64)).Q
    with torch.no_grad():
        model.left[:3] = u
        model.right[:3] = u
        model.down[:, :3] = 2.0 * basis[:, :1]  # any column norm: the gram normalises it
        model.down[:, 3:] = basis[:, 1 : N - 2]
    G = mixing_gram(model)
    Q, members = composite_form(model, 0, G, neighbours=5)
    assert set(members.tolist()[:3]) == {0, 1, 2}
    values, vectors = top_subspace(Q, k=3)
    torch.testing.assert_close(values, torch.ones(3, dtype=torch.float64), **TOL)
    torch.testing.assert_close(vectors @ vectors.T, u.T @ u, **TOL)  # same projector: same span
    x = _inputs()
    torch.testing.assert_close(model.latents(x)[:, :3], (x @ u.T).pow(2), **TOL)
