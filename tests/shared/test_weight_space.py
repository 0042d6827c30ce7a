"""shared.nn.weight_space: exact equivariance and invariance (float64), the group action, the parameter count and
the completeness of the layer (its span equals the space of all equivariant linear maps)."""
from itertools import pairwise

import torch

from shared.nn.weight_space import (
    DWSLayer,
    DWSNet,
    commutant_dimension,
    dws_param_count,
    layer_span_rank,
    mlp_forward,
    permute_weight_space,
    random_hidden_permutations,
)

WIDTHS = (2, 5, 4, 3)  # d_0 .. d_M: M = 3, hidden widths 5 and 4



def random_space(widths, batch=3, channels=2, gen=None):
    w = [torch.randn(batch, b, a, channels, generator=gen, dtype=torch.float64) for a, b in pairwise(widths)]
    bs = [torch.randn(batch, b, channels, generator=gen, dtype=torch.float64) for b in widths[1:]]
    return w, bs


def test_layer_is_equivariant():
    gen = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    layer = DWSLayer(3, WIDTHS[0], WIDTHS[-1], 2, 3).double()
    for p in layer.biases:
        torch.nn.init.normal_(p)
    w, b = random_space(WIDTHS, gen=gen)
    for _ in range(3):
        perms = random_hidden_permutations(WIDTHS, gen)
        out_then_perm = permute_weight_space(*layer(w, b), perms)
        perm_then_out = layer(*permute_weight_space(w, b, perms))
        for a, c in zip(out_then_perm[0] + out_then_perm[1], perm_then_out[0] + perm_then_out[1]):
            assert torch.allclose(a, c, rtol=0, atol=1e-10)


def test_network_is_invariant_and_mlp_function_unchanged():
    gen = torch.Generator().manual_seed(1)
    torch.manual_seed(1)
    net = DWSNet(3, WIDTHS[0], WIDTHS[-1], channels=4, depth=2, n_outputs=2).double()
    w, b = random_space(WIDTHS, channels=1, gen=gen)
    w, b = [t[..., 0] for t in w], [t[..., 0] for t in b]
    perms = random_hidden_permutations(WIDTHS, gen)
    assert (net(w, b) - net(*permute_weight_space(w, b, perms))).abs().max() < 1e-10
    # the action is a symmetry of the represented function (any pointwise activation)
    x = torch.randn(7, WIDTHS[0], generator=gen, dtype=torch.float64)
    pw, pb = permute_weight_space(w, b, perms)
    for act in (torch.relu, torch.sin):
        f = mlp_forward([t[0] for t in w], [t[0] for t in b], x, act)
        g = mlp_forward([t[0] for t in pw], [t[0] for t in pb], x, act)
        assert torch.allclose(f, g, rtol=0, atol=1e-10)
        # and a non-trivial permutation does change the weights
    assert any(not torch.equal(a, c) for a, c in zip(w, pw))


def test_parameter_count_formula_and_width_independence():
    for widths in ((2, 5, 4, 3), (2, 16, 32, 3)):
        layer = DWSLayer(len(widths) - 1, widths[0], widths[-1], 2, 3)
        assert sum(p.numel() for p in layer.parameters()) == dws_param_count(3, 2, 3, 2, 3)
    # counted by hand for M = 2, d_0 = d_M = 1, one channel: W1, W2 and b1 index hidden layer 1, so each of their
    # 9 ordered pairs has 2 terms (kept, pooled); the 7 pairs with b2 have 1: 25 terms, plus 4 bias parameters
    assert dws_param_count(2, 1, 1, 1, 1) == 29


def test_layer_spans_every_equivariant_linear_map():
    widths = (2, 3, 2, 1)
    span = layer_span_rank(widths)
    assert span == commutant_dimension(widths)
    assert span == dws_param_count(3, 2, 1, 1, 1, bias=False)  # and no parameter is redundant
