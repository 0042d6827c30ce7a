"""Differentiable Tversky similarity and the Tversky projection layer (Doumbouya, Jurafsky, Manning, ICLR 2026,
arXiv 2506.11035).

Objects are vectors; a learned feature bank F (K, d) decides which features an object has: object a has feature k
iff a . f_k > 0, with salience a_k = (a . f_k) 1[a . f_k > 0]. The contrast model

    S(a, b) = theta f(A n B) - alpha f(A - B) - beta f(B - A)

and the ratio model S = f(A n B) / (f(A n B) + alpha f(A - B) + beta f(B - A) + 1) (the +1 keeps it finite).

Intersection reductions (I_a = sum_k a_k 1[b_k > 0], I_b = sum_k b_k 1[a_k > 0], sums over features):
  product  sum_k a_k b_k (the default)      min / max / mean / softmin / gmean of (I_a, I_b)
Difference reductions f(A - B):
  ignorematch     sum_k a_k 1[b . f_k <= 0] (the default): salience of a's features that b lacks
  substractmatch  ignorematch plus the excess of the shared features. Two readings (`per_feature`):
    False (the released code): (I_a - I_b) 1[I_a > I_b], comparing the sums over the shared features;
    True  (what the name suggests): sum_k (a_k - b_k) 1[a_k > 0, b_k > 0, a_k > b_k], feature by feature.
  The paper's text could not be read here; the released library (mdoumbouya/tversky) compares sums.

TverskyProjection(d_in, d_out, features) maps x (..., d_in) to y_j = S(x, pi_j), j < d_out, with learned
prototypes pi (d_out, d_in), feature bank (features, d_in), and scalars alpha, beta, theta: (features + d_out) d_in + 3
trainable numbers. A feature bank or prototypes can instead be passed to forward (shared with another layer, or
prototypes tied to a token embedding); then they are not this module's own parameters. Init as the library: bank and prototypes U(0, 1),
theta = 1, alpha = beta = 0.5 (an `init_scale` multiplies the U(0, 1) draws).

Multiply-adds per example (the registry's count, defaults product / ignorematch): K d_in (projecting x on the bank)
+ 3 K d_out (intersection, and the two differences). Projecting the prototypes on the bank (K d_out d_in) is done once
per forward in training and, in eval mode, once per parameter update (cached on the parameters' version counters).
The registry's block d -> h -> d is two projections stacked bare: 4 K (d + h) multiply-adds.
The indicator 1[a . f_k > 0] has no gradient: gradients reach the bank and the inputs through the saliences only.
"""
import torch
import torch.nn.functional as F
from torch import nn

from shared.nn.layer_registry import register

INTERSECTIONS = ("product", "min", "max", "mean", "gmean", "softmin")
DIFFERENCES = ("ignorematch", "substractmatch")
MODELS = ("contrast", "ratio")


def feature_saliences(x, fbank):
    """(masked saliences a_k, indicators 1[a . f_k > 0]) of x (..., d) on the bank (K, d): two (..., K) tensors, the
    indicators in x's dtype."""
    dot = x @ fbank.T
    ind = (dot > 0).to(x.dtype)
    return dot * ind, ind


def intersection(am, bm, ia, ib, reduction="product"):
    """f(A n B) for every pair: am, ia (..., n, K) of the a's; bm, ib (m, K) of the b's -> (..., n, m)."""
    if reduction == "product":
        return am @ bm.T
    inter_a, inter_b = am @ ib.T, ia @ bm.T  # I_a, I_b: each side's salience on the features both have
    if reduction == "min":
        return torch.minimum(inter_a, inter_b)
    if reduction == "max":
        return torch.maximum(inter_a, inter_b)
    if reduction == "mean":
        return (inter_a + inter_b) / 2
    if reduction == "gmean":  # log of a zero sum is -inf: only for inputs whose shared features are never empty
        return torch.exp((torch.log(inter_a) + torch.log(inter_b)) / 2)
    if reduction == "softmin":
        return -torch.logsumexp(-torch.stack([inter_a, inter_b]), dim=0)
    raise ValueError(f"intersection reduction {reduction!r}: choose from {INTERSECTIONS}")


def difference(am, bm, ia, ib, reduction="ignorematch", per_feature=False, transpose=False):
    """f(A - B) for every pair (..., n, m) of the a's (am, ia: (..., n, K)) and b's (bm, ib: (m, K)).
    With transpose=True the roles swap and the result is still indexed (n, m): f(B - A) for b = the m rows."""
    if reduction not in DIFFERENCES:
        raise ValueError(f"difference reduction {reduction!r}: choose from {DIFFERENCES}")
    if transpose:  # f(B - A)[i, j] = salience of b_j's features that a_i lacks
        out = (1 - ia) @ bm.T
    else:
        out = am @ (1 - ib).T
    if reduction == "ignorematch":
        return out
    if per_feature:  # sum_k (a_k - b_k)^+ over the features both have, pair by pair: (..., n, m, K)
        first, second = (bm.unsqueeze(-3), am.unsqueeze(-2)) if transpose else (am.unsqueeze(-2), bm.unsqueeze(-3))
        both = ia.unsqueeze(-2) * ib.unsqueeze(-3)
        return out + (both * (first - second).clamp(min=0)).sum(-1)
    inter_a, inter_b = am @ ib.T, ia @ bm.T  # the released code: compare the sums over the shared features
    first, second = (inter_b, inter_a) if transpose else (inter_a, inter_b)
    return out + (first - second) * (first > second).to(out.dtype)


def tversky_similarity(a, b, fbank, alpha, beta, theta, intersection_reduction="product",
                       difference_reduction="ignorematch", model="contrast", normalize=False, per_feature=False,
                       b_saliences=None):
    """S(a_i, b_j) for a (..., n, d) and b (m, d): (..., n, m). `b_saliences` (bm, ib) skips projecting b."""
    if model not in MODELS:
        raise ValueError(f"similarity model {model!r}: choose from {MODELS}")
    if normalize:
        a, b = F.normalize(a, dim=-1), F.normalize(b, dim=-1)
    am, ia = feature_saliences(a, fbank)
    bm, ib = b_saliences if b_saliences is not None else feature_saliences(b, fbank)
    inter = intersection(am, bm, ia, ib, intersection_reduction)
    a_minus_b = difference(am, bm, ia, ib, difference_reduction, per_feature)
    b_minus_a = difference(am, bm, ia, ib, difference_reduction, per_feature, transpose=True)
    if model == "contrast":
        return theta * inter - alpha * a_minus_b - beta * b_minus_a
    return inter / (inter + alpha * a_minus_b + beta * b_minus_a + 1)


class TverskyProjection(nn.Module):
    """y_j = S(x, pi_j): a drop-in for nn.Linear(d_in, d_out, bias=False), (..., d_in) -> (..., d_out).

    With own_fbank / own_prototypes False the module holds no bank / prototypes; the caller passes them to forward
    (a bank shared by several layers, prototypes tied to a token embedding)."""

    def __init__(self, d_in, d_out, features, intersection_reduction="product", difference_reduction="ignorematch",
                 model="contrast", normalize=False, per_feature=False, own_fbank=True, own_prototypes=True,
                 init_scale=1.0):
        super().__init__()
        for name, value, allowed in (("intersection", intersection_reduction, INTERSECTIONS),
                                     ("difference", difference_reduction, DIFFERENCES), ("model", model, MODELS)):
            if value not in allowed:
                raise ValueError(f"{name} {value!r}: choose from {allowed}")
        self.d_in, self.d_out, self.features = d_in, d_out, features
        self.options = {"intersection_reduction": intersection_reduction, "difference_reduction": difference_reduction,
                        "model": model, "normalize": normalize, "per_feature": per_feature}
        self.init_scale = init_scale
        self.fbank = nn.Parameter(torch.empty(features, d_in)) if own_fbank else None
        self.prototypes = nn.Parameter(torch.empty(d_out, d_in)) if own_prototypes else None
        self.alpha = nn.Parameter(torch.empty(()))
        self.beta = nn.Parameter(torch.empty(()))
        self.theta = nn.Parameter(torch.empty(()))
        self._cache = (None, None)
        self.reset_parameters()

    def reset_parameters(self):
        with torch.no_grad():
            for p in (self.fbank, self.prototypes):
                if p is not None:
                    p.uniform_(0, 1).mul_(self.init_scale)
            self.alpha.fill_(0.5)
            self.beta.fill_(0.5)
            self.theta.fill_(1.0)
        return self

    def prototype_saliences(self, fbank, prototypes):
        """(masked saliences, indicators) of the prototypes on the bank: in training at every call; in eval mode once
        per parameter update, without a graph (keyed on the tensors' identities and version counters)."""
        if self.options["normalize"]:
            prototypes_n = F.normalize(prototypes, dim=-1)
        else:
            prototypes_n = prototypes
        if self.training:
            return feature_saliences(prototypes_n, fbank)
        key = (id(fbank), fbank._version, id(prototypes), prototypes._version, fbank.dtype, fbank.device)
        if self._cache[0] != key:
            with torch.no_grad():
                self._cache = (key, feature_saliences(prototypes_n, fbank))
        return self._cache[1]

    def forward(self, x, fbank=None, prototypes=None):
        fbank = self.fbank if fbank is None else fbank
        prototypes = self.prototypes if prototypes is None else prototypes
        if fbank is None or prototypes is None:
            raise ValueError("this TverskyProjection holds no feature bank or prototypes: pass them to forward")
        o = self.options
        return tversky_similarity(x, prototypes, fbank, self.alpha, self.beta, self.theta,
                                  o["intersection_reduction"], o["difference_reduction"], o["model"], o["normalize"],
                                  o["per_feature"], b_saliences=self.prototype_saliences(fbank, prototypes))

    def train(self, mode=True):
        self._cache = (None, None)
        return super().train(mode)

    def extra_repr(self):
        return f"d_in={self.d_in}, d_out={self.d_out}, features={self.features}, " + ", ".join(
            f"{k}={v}" for k, v in self.options.items())


def tversky_params(d_in, d_out, features):
    """Trainable numbers of TverskyProjection with its own bank and prototypes."""
    return (features + d_out) * d_in + 3


def tversky_macs(d_in, d_out, features):
    """Multiply-adds per example, defaults (product, ignorematch): K d_in + 3 K d_out (module docstring)."""
    return features * d_in + 3 * features * d_out


def _block(d, h, features):
    """d -> h -> d: two Tversky projections stacked bare (each is nonlinear), a bank of `features` each."""
    return nn.Sequential(TverskyProjection(d, h, features), TverskyProjection(h, d, features))


register("tversky", layer=lambda d_in, d_out, features: TverskyProjection(d_in, d_out, features),
         params=lambda d_in, d_out, features: tversky_params(d_in, d_out, features),
         macs=lambda d_in, d_out, features: tversky_macs(d_in, d_out, features),
         block=_block,
         block_params=lambda d, h, features: tversky_params(d, h, features) + tversky_params(h, d, features),
         block_macs=lambda d, h, features: tversky_macs(d, h, features) + tversky_macs(h, d, features),
         hyper={"features": 16}, nonlinear=True, cite="Doumbouya, Jurafsky, Manning 2026 (Tversky projection)")
