"""shared.train.muon: the Newton-Schulz orthogonalisation and the Muon step, written out by hand."""
import pytest
import torch

from shared.train.muon import Muon, newton_schulz


DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.mark.parametrize("shape", [(20, 8), (8, 20)])
def test_newton_schulz_is_roughly_orthogonal_with_the_same_singular_vectors(shape):
    torch.manual_seed(0)
    g = torch.randn(*shape, dtype=torch.float64)
    x = newton_schulz(g)
    assert x.shape == g.shape and x.dtype == torch.float32
    s = torch.linalg.svdvals(x.double())
    assert (s > 0.5).all() and (s < 1.5).all(), s  # U S' V^T with S' near 1, not exactly U V^T
    u, _, vh = torch.linalg.svd(g, full_matrices=False)
    inner = u.T @ x.double() @ vh.T  # diagonal (= S') when x shares g's singular vectors
    torch.testing.assert_close(inner, torch.diag(inner.diagonal()), rtol=0, atol=1e-5)
    torch.testing.assert_close(newton_schulz(3.0 * g), x, rtol=1e-5, atol=1e-5)  # scale-free
    more = torch.linalg.svdvals(newton_schulz(g, steps=20).double())
    assert (more > 0.6).all() and (more < 1.2).all()  # more steps stay in the quintic's band, not at exactly 1


@pytest.mark.parametrize("shape", [(12, 5), (5, 12)])
@pytest.mark.parametrize("nesterov", [True, False])
def test_two_steps_match_hand_written_update(shape, nesterov):
    torch.manual_seed(1)
    p = torch.nn.Parameter(torch.randn(*shape))
    p0 = p.detach().clone()
    opt = Muon([p], lr=0.1, momentum=0.9, nesterov=nesterov, weight_decay=0.01)
    g1, g2 = torch.randn(*shape), torch.randn(*shape)
    scale = max(1, shape[0] / shape[1]) ** 0.5
    expected, buf = p0, torch.zeros(shape)
    for g in (g1, g2):
        p.grad = g.clone()
        opt.step()
        buf = 0.9 * buf + g
        direction = g + 0.9 * buf if nesterov else buf
        expected = expected * (1 - 0.1 * 0.01) - 0.1 * scale * newton_schulz(direction)
        torch.testing.assert_close(p.detach(), expected, rtol=1e-5, atol=1e-5)


def test_deterministic():
    def run():
        torch.manual_seed(2)
        p = torch.nn.Parameter(torch.randn(6, 9))
        opt = Muon([p])
        for _ in range(5):
            p.grad = torch.sin(p.detach() * 3.0)
            opt.step()
        return p.detach()

    assert torch.equal(run(), run())


def test_minimises_least_squares_with_a_scheduler():
    torch.manual_seed(3)
    a = torch.randn(12, 64)
    target = torch.randn(8, 12) @ a
    w = torch.nn.Parameter(torch.zeros(8, 12))
    opt = Muon([w], lr=0.05)
    sched = torch.optim.lr_scheduler.LinearLR(opt, start_factor=1.0, end_factor=0.0, total_iters=200)

    def loss():
        return (w @ a - target).pow(2).mean()

    first = loss().item()
    for _ in range(200):
        opt.zero_grad()
        loss().backward()
        opt.step()
        sched.step()
    assert loss().item() < first / 10, (first, loss().item())


def test_rejects_non_matrices():
    with pytest.raises(ValueError):
        Muon([torch.nn.Parameter(torch.zeros(5))])
    with pytest.raises(ValueError):
        Muon([torch.nn.Parameter(torch.zeros(2, 3, 4))])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("ns_dtype", [None, torch.bfloat16])
def test_runs_where_the_parameter_lives(device, ns_dtype):
    torch.manual_seed(4)
    p = torch.nn.Parameter(torch.randn(7, 4, device=device))
    before = p.detach().clone()
    opt = Muon([p], ns_dtype=ns_dtype)
    p.grad = torch.randn(7, 4, device=device)
    opt.step()
    assert p.device == before.device and p.dtype == torch.float32
    assert opt.state[p]["momentum_buffer"].device == p.device
    assert not torch.equal(p.detach(), before) and torch.isfinite(p).all()
