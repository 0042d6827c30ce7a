"""shared.nn.sae: the TopK SAE's definition (App G.3) and its training on planted sparse features."""
import pytest
import torch

from shared.nn.sae import TopKSAE, normalized_mse
from shared.train.sae import train_sae

TOL = dict(rtol=1e-12, atol=1e-12)


def _sae(d=6, m=10, k=3, seed=0):
    torch.manual_seed(seed)
    sae = TopKSAE(d, m, k).double()
    sae.normalize_decoder()  # built in float32: renormalize so float64 checks see exactly unit columns
    return sae


def test_init_unit_norm_decoder_and_encoder_is_its_transpose():
    sae = _sae()
    torch.testing.assert_close(sae.decoder.norm(dim=0), torch.ones(10, dtype=torch.float64), **TOL)
    torch.testing.assert_close(sae.encoder, sae.decoder.T, rtol=1e-6, atol=1e-6)  # up to the float32 build
    assert not any("bias" in name for name, _ in sae.named_parameters())  # no encoder bias; b_dec only


def test_encode_keeps_k_nonnegative_pre_activations_and_decode_is_affine():
    sae = _sae()
    with torch.no_grad():
        sae.b_dec.normal_()
    x = torch.randn(50, 6, dtype=torch.float64)
    pre = (x - sae.b_dec) @ sae.encoder.T  # the definition, without an encoder bias
    torch.testing.assert_close(sae.pre_activations(x), pre, **TOL)
    z = sae.encode(x)
    assert ((z != 0).sum(-1) <= 3).all() and (z >= 0).all()
    on = z > 0
    torch.testing.assert_close(z[on], pre[on], **TOL)  # an active latent carries its pre-activation unchanged
    kth = pre.topk(3, dim=-1).values[:, -1:]
    assert (pre[on] >= kth.expand_as(pre)[on]).all()
    torch.testing.assert_close(sae.decode(z), z @ sae.decoder.T + sae.b_dec, **TOL)


def test_projected_decoder_gradient_is_orthogonal_to_each_column():
    sae = _sae()
    sae(torch.randn(20, 6, dtype=torch.float64)).pow(2).sum().backward()
    sae.project_decoder_grad()
    torch.testing.assert_close((sae.decoder * sae.decoder.grad).sum(0), torch.zeros(10, dtype=torch.float64), **TOL)


def test_rejects_k_outside_the_latents():
    with pytest.raises(ValueError, match="k must be in"):
        TopKSAE(4, 8, 9)


def _planted(n=4000, d=16, m=24, k=2, seed=0):
    """x = sum of k of m random unit directions with positive magnitudes: a TopK SAE can represent it exactly."""
    g = torch.Generator().manual_seed(seed)
    dirs = torch.randn(m, d, generator=g)
    dirs /= dirs.norm(dim=1, keepdim=True)
    idx = torch.rand(n, m, generator=g).argsort(-1)[:, :k]
    mags = torch.zeros(n, m).scatter(1, idx, 1 + torch.rand(n, k, generator=g))
    return mags @ dirs


def test_training_reconstructs_planted_sparse_data_and_keeps_unit_decoder():
    acts = _planted()
    sae, log = train_sae(acts, 48, 2, 600, 256, 3e-3, seed=0, device=torch.device("cpu"), progress=False)
    assert normalized_mse(acts, sae(acts)) < 0.15
    assert log["history"][-1]["mse"] < 0.3 * log["history"][0]["mse"]
    torch.testing.assert_close(sae.decoder.norm(dim=0), torch.ones(48), rtol=1e-5, atol=1e-5)


def test_training_is_deterministic_for_a_seed():
    acts = _planted(n=500)
    a, _ = train_sae(acts, 32, 2, 30, 64, 1e-3, seed=3, device=torch.device("cpu"), progress=False)
    b, _ = train_sae(acts, 32, 2, 30, 64, 1e-3, seed=3, device=torch.device("cpu"), progress=False)
    c, _ = train_sae(acts, 32, 2, 30, 64, 1e-3, seed=4, device=torch.device("cpu"), progress=False)
    assert torch.equal(a.decoder, b.decoder) and torch.equal(a.encoder, b.encoder)
    assert not torch.equal(a.decoder, c.decoder)
