"""shared.nn.mixer against its formulas: vec(W X V) = (V^T (x) W) vec(X); a Mixer block (and an RP-Mixer block)
equals its wide sparse MLP in float64; densities 1/C and 1/S; the channel layer as a commutation-permuted block
diagonal; the masked layer's exact non-zeros; the registered token-mixing layer is I_C (x) W."""
import pytest
import torch

from shared.nn import layer_registry as registry
from shared.nn.mixer import (MaskedLinear, MixerBlock, commutation, density, effective_layers, unvec, vec,
                             wide_forward)

S, C = 5, 7


def test_vec_is_column_major_and_kron_identity():
    x = torch.randn(S, C, dtype=torch.float64)
    assert torch.equal(vec(x), x.T.reshape(-1)) and torch.equal(unvec(vec(x), S), x)
    w, v = torch.randn(3, S, dtype=torch.float64), torch.randn(C, 4, dtype=torch.float64)
    assert torch.allclose(vec(w @ x @ v), torch.kron(v.T.contiguous(), w) @ vec(x), rtol=0, atol=1e-12)
    assert torch.equal(commutation(S, C) @ vec(x), vec(x.T))


@pytest.mark.parametrize("permuted", [False, True])
def test_block_equals_its_wide_sparse_mlp(permuted):
    torch.manual_seed(0)
    block = MixerBlock(S, C, expansion=3, permuted=permuted, seed=1).double()
    x = torch.randn(4, S, C, dtype=torch.float64)
    want = vec(block(x))
    assert (wide_forward(effective_layers(block), vec(x)) - want).abs().max() < 1e-12 * want.abs().max()
    if not permuted:  # the token MLP acts on columns: written out for one channel
        h = torch.nn.functional.gelu(block.token_up.weight @ x[0, :, 2] + block.token_up.bias)
        token = x[0, :, 2] + block.token_down.weight @ h + block.token_down.bias
        assert torch.allclose(block._token_mlp(x)[0, :, 2] + x[0, :, 2], token, rtol=0, atol=1e-12)


def test_densities_and_commutation():
    torch.manual_seed(0)
    block = MixerBlock(S, C, expansion=2).double()
    layers = effective_layers(block)
    assert [density(w) for w, _ in layers] == [1 / C, 1 / C, 1 / S, 1 / S]
    k_in, k_out = commutation(S, C), commutation(S, 2 * C)
    blockdiag = torch.kron(torch.eye(S, dtype=torch.float64), block.channel_up.weight.detach())
    assert torch.equal(layers[2][0], k_out.T @ blockdiag @ k_in)


def test_rp_mixer_permutes_the_sparsity_pattern_only():
    torch.manual_seed(0)
    plain = MixerBlock(S, C, 2).double()
    rp = MixerBlock(S, C, 2, permuted=True, seed=3).double()
    rp.load_state_dict({**plain.state_dict(), "token_perm": rp.token_perm, "channel_perm": rp.channel_perm})
    for (a, _), (b, _) in zip(effective_layers(plain), effective_layers(rp)):
        assert (a != 0).sum() == (b != 0).sum() and not torch.equal(a != 0, b != 0)


def test_masked_linear_exact_nonzeros_and_forward():
    layer = MaskedLinear(12, 10, density=0.25, seed=4)
    assert int(layer.mask.sum()) == 30 and layer.n_params() == 30 + 10
    x = torch.randn(3, 12)
    assert torch.allclose(layer(x), x @ (layer.weight * layer.mask).T + layer.bias)
    assert torch.equal(MaskedLinear(12, 10, 0.25, seed=4).mask, layer.mask)


def test_registered_token_mixing_is_identity_kron_w():
    layer = registry.make("mixer", 12, 8, channels=4)
    w = layer.linear.weight.detach()
    x = torch.randn(2, 12)
    assert torch.allclose(layer(x), x @ torch.kron(torch.eye(4), w).T, atol=1e-6)
    for form, (d_in, d_out) in (("layer", (12, 8)), ("block", (12, 24))):
        module = registry.make("mixer", d_in, d_out, form, channels=4)
        assert registry.count("mixer", d_in, d_out, form, channels=4)["params"] == sum(
            p.numel() for p in module.parameters())
    assert registry.count("mixer", 12, 8, channels=4)["macs"] == 4 * 3 * 2
    with pytest.raises(ValueError, match="multiples of channels"):
        registry.make("mixer", 10, 8, channels=4)
