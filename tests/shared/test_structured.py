"""shared.nn.structured against the explicit matrices each structure stands for, and shared.nn.parametrization
against its table."""
import math

import pytest
import torch

from shared.nn.parametrization import factor_table, init_std, initialize, lr_multiplier, param_groups
from shared.nn.structured import BTT, Kronecker, Monarch, build, macs_of, matched_width, split


CASES = [("dense", {}), ("low_rank", {"rank": 3}), ("kronecker", {}), ("monarch", {"blocks": 4}),
         ("btt", {"rank": 1}), ("btt", {"rank": 2})]
SHAPES = [(16, 16), (16, 64), (64, 16), (36, 24)]


def _random(layer, seed=0):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in layer.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=p.dtype))
    return layer


def explicit_matrix(layer):
    """The (d_out, d_in) matrix from the structure's definition, built without the layer's forward."""
    name = type(layer).__name__
    if name == "Dense":
        return layer.weight
    if name == "LowRank":
        return layer.u @ layer.v
    if name == "Kronecker":
        return torch.kron(layer.a, layer.b)
    if name == "Monarch":
        b, d_out = layer.blocks, layer.d_out
        right, left = torch.block_diag(*layer.right), torch.block_diag(*layer.left)
        shuffle = torch.arange(d_out).reshape(b, d_out // b).T.reshape(-1)  # position i of P x reads x[shuffle[i]]
        return left @ torch.eye(d_out, dtype=left.dtype)[shuffle] @ right
    if name == "BTT":  # W[(o0, o1), (i1, i0)] = sum_r core1[i1, i0, (o0, r)] core2[o0, (i1, r), o1]
        c1 = layer.core1.reshape(layer.m1, layer.m0, layer.n0, layer.rank)
        c2 = layer.core2.reshape(layer.n0, layer.m1, layer.rank, layer.n1)
        return torch.einsum("iaor,oirp->opia", c1, c2).reshape(layer.d_out, layer.d_in)
    raise AssertionError(name)


@pytest.mark.parametrize("structure, options", CASES)
@pytest.mark.parametrize("d_in, d_out", SHAPES)
def test_layer_is_its_structured_matrix(structure, options, d_in, d_out):
    layer = _random(build(structure, d_in, d_out, **options).double())
    x = torch.randn(5, 3, d_in, dtype=torch.float64)
    w = explicit_matrix(layer)
    assert w.shape == (d_out, d_in)
    torch.testing.assert_close(layer(x), x @ w.T, rtol=0, atol=1e-12)
    torch.testing.assert_close(layer.matrix(), w, rtol=0, atol=1e-12)
    # exact counts: parameters and multiply-adds (one per nonzero product the forward pass forms)
    assert layer.n_params() == sum(f[1].numel() for f in layer.factors())
    assert layer.macs() == macs_of(structure, d_in, d_out, **options)


def test_counts_match_the_paper_formulas():
    d = 1024
    assert build("dense", d, d).macs() == d * d
    assert build("low_rank", d, d, rank=32).n_params() == 2 * 32 * d
    kron = Kronecker(d, d)
    assert kron.n_params() == 2 * d and kron.macs() == 2 * d ** 1.5
    assert BTT(d, d, rank=1).macs() == 2 * d ** 1.5 and BTT(d, d, rank=4).n_params() == 8 * d ** 1.5
    assert Monarch(d, d, blocks=32).macs() == 2 * d ** 1.5 and Monarch(d, d, blocks=4).n_params() == 2 * d * d // 4


def test_btt_rank_one_is_monarch_up_to_permutations_and_full_rank():
    layer = _random(BTT(64, 64).double())
    assert torch.linalg.matrix_rank(layer.matrix()) == 64
    monarch = _random(Monarch(64, 64, blocks=8).double())
    assert layer.n_params() == monarch.n_params() == 2 * 64 * 8


def test_gradients_flow_to_every_factor():
    for structure, options in CASES:
        layer = _random(build(structure, 16, 36, **options))
        layer(torch.randn(4, 16)).pow(2).sum().backward()
        assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in layer.parameters()), structure


def test_split_and_matched_width():
    assert split(1024) == (32, 32) and split(24) == (4, 6) and split(13) == (1, 13)
    dense = macs_of("dense", 64, 256) + macs_of("dense", 256, 64)
    assert matched_width("dense", dense, [32, 64, 128], expansion=4) == 64
    w = matched_width("btt", dense, [64, 256, 1024, 4096], expansion=4, rank=1)
    assert w == 256  # BTT spends ~2 w^1.5 per layer: 4x the dense width at equal compute (49,152 vs 32,768 MACs)
    with pytest.raises(ValueError, match="structure"):
        build("circulant", 4, 4)
    with pytest.raises(ValueError, match="divisible"):
        Monarch(10, 10, blocks=4)


@pytest.mark.parametrize("scheme", ["sp", "ntp", "mup"])
def test_parametrisation_table(scheme):
    n, d = 256, 16
    assert init_std(scheme, n, n) == pytest.approx(1 / math.sqrt(n))
    assert lr_multiplier(scheme, n, n, "sgd") == {"sp": 1, "ntp": 1 / n, "mup": 1}[scheme]
    assert lr_multiplier(scheme, n, n, "adam") == pytest.approx({"sp": 1, "ntp": n ** -0.5, "mup": 1 / n}[scheme])
    if scheme == "mup":  # Hayou's muP for a deep linear MLP: V ~ N(0, 1/n^2), W0 ~ N(0, 1/d), input lr ~ n
        assert init_std("mup", n, 1) == pytest.approx(1 / n)
        assert init_std("mup", d, n) == pytest.approx(1 / math.sqrt(d))
        assert lr_multiplier("mup", d, n, "sgd") == n / d
    with pytest.raises(ValueError, match="parametrisation"):
        init_std("abc", 1, 1)


def test_mup_init_keeps_the_spectral_norm_order_one_across_widths():
    norms = {}
    for structure, options in [("dense", {}), ("btt", {"rank": 1}), ("monarch", {"blocks": 4}), ("kronecker", {})]:
        for d in (64, 1024):
            layer = build(structure, d, d, **options).double()
            initialize(factor_table({"h": layer}, "mup"), torch.Generator().manual_seed(0))
            norms[structure, d] = torch.linalg.matrix_norm(layer.matrix(), 2).item()
        assert 0.5 < norms[structure, 64] < 6 and 0.5 < norms[structure, 1024] < 6, norms
        assert 0.6 < norms[structure, 1024] / norms[structure, 64] < 1.6, norms  # width-independent


def test_structure_aware_and_naive_learning_rates():
    btt = BTT(256, 256)
    aware = factor_table({"h": btt}, "mup", split_by_factors=True)
    naive = factor_table({"h": btt}, "mup", per_layer=True)
    assert [r["lr_mult"] for r in aware] == [1 / (16 * 2), 1 / (16 * 2)]  # 1 / (k fan_in) per core, k = 2
    assert [r["lr_mult"] for r in naive] == [1 / 256, 1 / 256]  # the dense layer's 1 / d for every core
    base = factor_table({"h": BTT(64, 64)}, "mup", split_by_factors=True)
    groups = param_groups(aware, 1e-2, base_rows=base)
    assert [g["lr"] for g in groups] == pytest.approx([1e-2 * 8 / 16] * 2)  # base width 64: fan-in 8 -> 16
    zero = factor_table({"h": btt}, "mup")
    initialize(zero, zero={"h.core2"})
    assert btt.core2.abs().sum() == 0 and btt.core1.abs().sum() > 0
    with pytest.raises(ValueError, match="base_rows"):
        param_groups(aware, 1e-2, base_rows=factor_table({"h": build("dense", 4, 4)}, "mup"))
    # Qiu et al.'s reference: the dense layer at base width 64 (multiplier 1/64), so the /k survives
    dense_at_base = factor_table({"h": build("dense", 64, 64)}, "mup")[0]["lr_mult"]
    layer_base = param_groups(aware, 1e-2, base_layers={"h": dense_at_base})
    assert [g["lr"] for g in layer_base] == pytest.approx([1e-2 * 64 / (2 * 16)] * 2)
    with pytest.raises(ValueError, match="not both"):
        param_groups(aware, 1e-2, base_rows=base, base_layers={"h": 1.0})
