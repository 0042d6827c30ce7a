"""shared.nn.linear_attention: the one-layer forward is one step of preconditioned GD plus nuisance terms."""
import pytest
import torch

from shared.data.icl_regression import embed, sample_prompts
from shared.nn.linear_attention import (
    LinearSelfAttention,
    LinearTransformer,
    effective_preconditioner,
    preconditioned_gd_form,
)


def reference(layer, prompts, sign=1.0):
    """x_q^T Gamma g + (1/n) sum_j (u^T x_j)(x_q^T B^T x_j) + (a/n) sum_j y_j^2 c^T x_q (+ the query term)."""
    return sign * preconditioned_gd_form(layer, prompts)


@pytest.mark.parametrize("param", ["full", "sparse"])
@pytest.mark.parametrize("mask", [False, True])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_forward_is_preconditioned_gd_plus_nuisance(param, mask, sign):
    torch.manual_seed(0)
    model = LinearTransformer(4, param=param, mask_query_key=mask, readout_sign=sign, init_std=0.5).double()
    prompts = sample_prompts(128, 7, 4, torch.Generator().manual_seed(1), sigma=0.3, dtype=torch.float64)
    with torch.no_grad():
        forward = model(embed(prompts))
    ref = reference(model.layers[0], prompts, sign)
    assert (forward - ref).abs().max() / forward.abs().max() < 1e-12


def test_sparse_gamma_is_p_x_times_q_x():
    """Ahn et al.'s blocks: u = 0, c = 0, a = 1, so Gamma = Q_x (the B^T block) and no nuisance."""
    torch.manual_seed(2)
    layer = LinearSelfAttention(3, param="sparse", init_std=0.3).double()
    gamma, nuisance = effective_preconditioner(layer)
    assert torch.allclose(gamma, layer.key_query[0].detach())
    assert nuisance == {"b_t_u": 0.0, "a_c": 0.0}


def test_nuisance_is_rescaling_invariant():
    torch.manual_seed(3)
    layer = LinearSelfAttention(3, init_std=0.4).double()
    gamma, before = effective_preconditioner(layer)
    with torch.no_grad():
        layer.value[0, 3, :] *= 5.0  # (u, a) -> 5 (u, a)
        layer.key_query[0, :3, :] /= 5.0  # (B^T, c) -> (B^T, c) / 5
    gamma2, after = effective_preconditioner(layer)
    assert torch.allclose(gamma, gamma2, atol=1e-14)
    assert after == pytest.approx(before, rel=1e-10)


def test_parameter_counts():
    assert sum(p.numel() for p in LinearTransformer(5, layers=3, param="sparse").parameters()) == 150
    assert sum(p.numel() for p in LinearTransformer(5, layers=1, param="full").parameters()) == 72
    assert sum(p.numel() for p in LinearTransformer(5, layers=2, heads=3, param="full").parameters()) == 2 * 3 * 72


def test_masking_only_drops_the_query_term():
    torch.manual_seed(4)
    full = LinearSelfAttention(3, init_std=0.5).double()
    masked = LinearSelfAttention(3, mask_query_key=True).double()
    masked.load_state_dict(full.state_dict())
    z = embed(sample_prompts(16, 5, 3, torch.Generator().manual_seed(5), dtype=torch.float64))
    with torch.no_grad():
        diff = full(z) - masked(z)
    assert diff[:, :-1].abs().max() > 0  # context rows see the query's key in the unmasked layer
    p, q = full.matrices()
    zq = z[:, -1]
    expected = torch.einsum("bd,de,be->b", zq, q[0].detach(), zq)[:, None] * (zq @ p[0].detach().T) / 5
    assert torch.allclose(diff[:, -1], expected, atol=1e-12)


def test_bad_param_is_refused():
    with pytest.raises(ValueError):
        LinearSelfAttention(3, param="dense")
