"""shared.nn.tversky against a per-sample, per-feature loop over the formulas (float64), for every reduction, both
similarity models and both readings of substractmatch; the reductions to a dot product and the asymmetry."""
import itertools
import math

import pytest
import torch

from shared.nn import layer_registry as registry
from shared.nn.tversky import DIFFERENCES, INTERSECTIONS, TverskyProjection, tversky_similarity


def loop_similarity(a, b, fbank, alpha, beta, theta, inter, diff, model, per_feature):
    """S(a, b) for one pair, written from the definitions with Python floats."""
    K = fbank.shape[0]
    sa = [float(a @ fbank[k]) for k in range(K)]
    sb = [float(b @ fbank[k]) for k in range(K)]
    has_a, has_b = [s > 0 for s in sa], [s > 0 for s in sb]
    ak = [s if h else 0.0 for s, h in zip(sa, has_a)]
    bk = [s if h else 0.0 for s, h in zip(sb, has_b)]
    i_a = sum(ak[k] for k in range(K) if has_b[k])
    i_b = sum(bk[k] for k in range(K) if has_a[k])
    if inter == "product":
        f_inter = sum(ak[k] * bk[k] for k in range(K))
    elif inter == "min":
        f_inter = min(i_a, i_b)
    elif inter == "max":
        f_inter = max(i_a, i_b)
    elif inter == "mean":
        f_inter = (i_a + i_b) / 2
    elif inter == "gmean":
        f_inter = math.sqrt(i_a * i_b)
    else:
        f_inter = -math.log(math.exp(-i_a) + math.exp(-i_b))

    def minus(x, y, hx, hy, ix, iy):  # f(X - Y)
        out = sum(x[k] for k in range(len(x)) if not hy[k])
        if diff == "substractmatch":
            if per_feature:
                out += sum(x[k] - y[k] for k in range(len(x)) if hx[k] and hy[k] and x[k] > y[k])
            elif ix > iy:
                out += ix - iy
        return out

    a_b = minus(ak, bk, has_a, has_b, i_a, i_b)
    b_a = minus(bk, ak, has_b, has_a, i_b, i_a)
    if model == "contrast":
        return theta * f_inter - alpha * a_b - beta * b_a
    return f_inter / (f_inter + alpha * a_b + beta * b_a + 1)


CASES = [(i, d, m, pf) for i, d, m in itertools.product(INTERSECTIONS, DIFFERENCES, ("contrast", "ratio"))
         for pf in ((False, True) if d == "substractmatch" else (False,))]


@pytest.mark.parametrize("inter,diff,model,per_feature", CASES)
def test_layer_equals_the_per_sample_loop(inter, diff, model, per_feature):
    gen = torch.Generator().manual_seed(0)
    d, K, p, n = 5, 7, 4, 6
    layer = TverskyProjection(d, p, K, inter, diff, model, per_feature=per_feature).double()
    with torch.no_grad():  # signed bank and prototypes: every feature present for some objects, absent for others
        layer.fbank.copy_(torch.randn(K, d, generator=gen, dtype=torch.float64))
        layer.prototypes.copy_(torch.randn(p, d, generator=gen, dtype=torch.float64))
        layer.alpha.fill_(0.3), layer.beta.fill_(0.8), layer.theta.fill_(1.7)
    x = torch.randn(n, d, generator=gen, dtype=torch.float64)
    if inter == "gmean":  # logs of the shared sums: keep them positive (every feature present everywhere)
        with torch.no_grad():
            layer.fbank.abs_(), layer.prototypes.abs_()
        x = x.abs()
    y = layer(x)
    ref = torch.tensor([[loop_similarity(x[i], layer.prototypes.detach()[j], layer.fbank.detach(), 0.3, 0.8, 1.7, inter, diff, model,
                                         per_feature) for j in range(p)] for i in range(n)], dtype=torch.float64)
    assert (y - ref).abs().max() < 1e-12 * max(1.0, ref.abs().max().item())
    layer.eval()  # the cached prototype saliences give the same numbers
    assert (layer(x) - ref).abs().max() < 1e-12 * max(1.0, ref.abs().max().item())


def test_the_two_substractmatch_readings_differ():
    gen = torch.Generator().manual_seed(1)
    fbank, a, b = (torch.randn(s, generator=gen, dtype=torch.float64) for s in ((16, 6), (8, 6), (8, 6)))
    args = (a, b, fbank, 0.5, 0.5, 1.0, "product", "substractmatch")
    assert (tversky_similarity(*args, per_feature=False) - tversky_similarity(*args, per_feature=True)).abs().max() > 1e-3


def test_zero_alpha_beta_and_a_linear_bank_give_a_dot_product():
    """alpha = beta = 0 and theta = 1: S(x, pi) = sum_k a_k pi_k. With the identity bank (d = K) and non-negative x
    and pi (every salience present: f linear on them), that is the dot product x . pi."""
    gen = torch.Generator().manual_seed(2)
    d, p = 6, 3
    layer = TverskyProjection(d, p, d).double()
    with torch.no_grad():
        layer.fbank.copy_(torch.eye(d, dtype=torch.float64))
        layer.prototypes.copy_(torch.rand(p, d, generator=gen, dtype=torch.float64) + 0.1)
        layer.alpha.zero_(), layer.beta.zero_()
    x = torch.rand(5, d, generator=gen, dtype=torch.float64) + 0.1
    assert (layer(x) - x @ layer.prototypes.T).abs().max() < 1e-13


def test_alpha_not_beta_is_asymmetric_and_alpha_equal_beta_symmetric():
    gen = torch.Generator().manual_seed(3)
    fbank = torch.randn(12, 5, generator=gen, dtype=torch.float64)
    a, b = torch.randn(20, 5, generator=gen, dtype=torch.float64), torch.randn(20, 5, generator=gen, dtype=torch.float64)

    def s(x, y, alpha, beta):
        return tversky_similarity(x, y, fbank, alpha, beta, 1.0).diagonal()

    assert (s(a, b, 0.2, 0.9) - s(b, a, 0.2, 0.9)).abs().max() > 1e-3
    assert (s(a, b, 0.5, 0.5) - s(b, a, 0.5, 0.5)).abs().max() < 1e-12
    assert (s(a, b, 0.2, 0.9) - s(b, a, 0.9, 0.2)).abs().max() < 1e-12  # swapping the weights swaps the roles


def test_registry_counts_and_shared_tensors():
    layer = registry.make("tversky", 9, 4, features=5)
    assert sum(q.numel() for q in layer.parameters()) == registry.count("tversky", 9, 4, features=5)["params"]
    shared = TverskyProjection(9, 4, 5, own_fbank=False, own_prototypes=False)
    assert sum(q.numel() for q in shared.parameters()) == 3
    x = torch.rand(2, 9)
    assert torch.allclose(shared(x, fbank=layer.fbank, prototypes=layer.prototypes), layer(x))
    with pytest.raises(ValueError, match="pass them"):
        shared(x)
