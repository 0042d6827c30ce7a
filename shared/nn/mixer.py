"""The MLP-Mixer block as a wide and sparse MLP (Hayase & Karakida, "Understanding MLP-Mixer as a Wide and Sparse
MLP", ICML 2024).

A feature matrix X has S tokens (rows) and C channels (columns); torch holds a batch as (B, S, C). vec stacks the
columns (column-major): vec(X)[c S + s] = X[s, c], and vec(W X V) = (V^T (x) W) vec(X). So the block's two
residual MLPs are MLPs on vec(X), of effective width S C, whose weights are Kronecker products with an identity:

  token mixing    X + W2 act(W1 X + b1) + b2      vec: (I_C (x) W1), (I_C (x) W2)   density 1/C
  channel mixing  X + act(X W3 + b3) W4 + b4      vec: (W3^T (x) I_S), (W4^T (x) I_S) = K^T (I_S (x) W3^T) K ...
                                                   density 1/S   (K = commutation(S, C): K vec(X) = vec(X^T))

`effective_layers(block)` returns those four dense (weight, bias) pairs and `wide_forward` runs them on vec(X), the
block's "wide sparse MLP". With `permuted=True` each residual MLP reads vec(X) through a fixed random permutation P
of its S C entries and writes back through P^T (the RP-Mixer, the paper's section 5): its effective weights are
(I (x) W1) P and P^T (I (x) W2), block-diagonal structure scrambled, density and parameters unchanged.
`MaskedLinear` is the comparator SW-MLP's layer: a dense weight times a fixed random 0/1 mask of a given density.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

from shared.nn.layer_registry import register

ACTIVATIONS = {"gelu": F.gelu, "relu": F.relu, "identity": lambda x: x}


def vec(x):
    """(..., S, C) -> (..., S C), columns stacked (column-major)."""
    return x.transpose(-1, -2).reshape(*x.shape[:-2], -1)


def unvec(v, tokens):
    """The inverse of vec: (..., S C) -> (..., S, C)."""
    return v.reshape(*v.shape[:-1], -1, tokens).transpose(-1, -2)


def commutation(rows, cols, dtype=torch.float64):
    """K with K vec(X) = vec(X^T) for X of shape (rows, cols): the perfect shuffle."""
    idx = torch.arange(rows * cols).reshape(cols, rows).T.reshape(-1)  # vec(X^T)[i] = vec(X)[idx[i]]
    return torch.eye(rows * cols, dtype=dtype)[idx]


class MixerBlock(nn.Module):
    """Token mixing, then channel mixing, each a residual two-layer MLP (hidden expansion x S and expansion x C),
    no LayerNorm (outside the effective-width identity, dossier 7). permuted=True: the RP-Mixer (module docstring),
    its two permutations drawn from `seed`."""

    def __init__(self, tokens, channels, expansion=2, act="gelu", permuted=False, seed=0):
        super().__init__()
        self.tokens, self.channels, self.act = tokens, channels, act
        self.token_up, self.token_down = nn.Linear(tokens, expansion * tokens), nn.Linear(expansion * tokens, tokens)
        self.channel_up = nn.Linear(channels, expansion * channels)
        self.channel_down = nn.Linear(expansion * channels, channels)
        self.permuted = permuted
        if permuted:
            gen = torch.Generator().manual_seed(seed)
            for name in ("token_perm", "channel_perm"):
                self.register_buffer(name, torch.randperm(tokens * channels, generator=gen))

    def _token_mlp(self, x):  # (B, S, C): the MLP acts along S, the same for every channel
        h = ACTIVATIONS[self.act](self.token_up(x.transpose(1, 2)))
        return self.token_down(h).transpose(1, 2)

    def _channel_mlp(self, x):  # along C, the same for every token
        return self.channel_down(ACTIVATIONS[self.act](self.channel_up(x)))

    def _through(self, mlp, x, perm):
        """mlp read through P and written back through P^T (the RP-Mixer), or mlp(x) itself."""
        if perm is None:
            return mlp(x)
        y = mlp(unvec(vec(x)[:, perm], self.tokens))
        return unvec(vec(y)[:, torch.argsort(perm)], self.tokens)

    def forward(self, x):
        x = x + self._through(self._token_mlp, x, self.token_perm if self.permuted else None)
        return x + self._through(self._channel_mlp, x, self.channel_perm if self.permuted else None)


@torch.no_grad()
def effective_layers(block, dtype=torch.float64):
    """The block's four layers on vec(X) as dense (weight, bias) pairs: token up, token down, channel up, channel
    down (module docstring); float64 by default, so that the identity can be checked to rounding."""
    s, c = block.tokens, block.channels
    i_s, i_c = torch.eye(s, dtype=dtype), torch.eye(c, dtype=dtype)
    one_s, one_c = torch.ones(s, dtype=dtype), torch.ones(c, dtype=dtype)

    def w(layer):
        return layer.weight.to(dtype), layer.bias.to(dtype)
    (w1, b1), (w2, b2) = w(block.token_up), w(block.token_down)
    (w3t, b3), (w4t, b4) = w(block.channel_up), w(block.channel_down)  # nn.Linear holds W3^T, W4^T
    layers = [(torch.kron(i_c, w1), torch.kron(one_c, b1)), (torch.kron(i_c, w2), torch.kron(one_c, b2)),
              (torch.kron(w3t, i_s), torch.kron(b3, one_s)), (torch.kron(w4t, i_s), torch.kron(b4, one_s))]
    if block.permuted:  # z = P v: up reads (W P), down writes (P^T W, P^T b)
        for k, perm in ((0, block.token_perm), (2, block.channel_perm)):
            p = torch.eye(s * c, dtype=dtype)[perm]
            (up, bu), (down, bd) = layers[k], layers[k + 1]
            layers[k], layers[k + 1] = (up @ p, bu), (p.T @ down, p.T @ bd)
    return layers


def wide_forward(layers, v, act="gelu"):
    """The wide MLP on vec(X), v (B, S C): two residual MLPs v + W' act(W v + b) + b'."""
    fn = ACTIVATIONS[act]
    for (up, bu), (down, bd) in (layers[:2], layers[2:]):
        v = v + fn(v @ up.T + bu) @ down.T + bd
    return v


def density(weight):
    """The fraction of non-zero entries."""
    return (weight != 0).sum().item() / weight.numel()


class MaskedLinear(nn.Module):
    """A d_in -> d_out linear map whose weight is W * M with M a fixed random 0/1 mask holding exactly
    round(density d_in d_out) ones (drawn from `seed`): the sparse-weight MLP's layer. Weights and bias start
    U(+-1/sqrt(density d_in)), nn.Linear's init for the expected number of inputs a unit sees."""

    def __init__(self, d_in, d_out, density, seed=0, bias=True):
        super().__init__()
        self.d_in, self.d_out = d_in, d_out
        n = d_in * d_out
        keep = torch.randperm(n, generator=torch.Generator().manual_seed(seed))[:round(density * n)]
        self.register_buffer("mask", torch.zeros(n).index_fill_(0, keep, 1.0).reshape(d_out, d_in))
        bound = 1 / math.sqrt(max(density * d_in, 1.0))
        self.weight = nn.Parameter(torch.empty(d_out, d_in).uniform_(-bound, bound))
        self.bias = nn.Parameter(torch.empty(d_out).uniform_(-bound, bound)) if bias else None

    def forward(self, x):
        return F.linear(x, self.weight * self.mask, self.bias)

    def n_params(self):
        """Trainable numbers that can be non-zero: the mask's ones plus the bias."""
        return int(self.mask.sum().item()) + (self.d_out if self.bias is not None else 0)


# --- the layer registry: the token-mixing map as a drop-in layer, the token-mixing MLP as a block -----------------

class TokenMixing(nn.Module):
    """(..., d_in) -> (..., d_out) as (I_C (x) W) with C = `channels`: x read as vec of (d_in / C, C), one
    nn.Linear(d_in / C, d_out / C) shared by the C columns (bias-free)."""

    def __init__(self, d_in, d_out, channels):
        super().__init__()
        if d_in % channels or d_out % channels:
            raise ValueError(f"mixer: d_in ({d_in}) and d_out ({d_out}) must be multiples of channels ({channels})")
        self.channels = channels
        self.linear = nn.Linear(d_in // channels, d_out // channels, bias=False)

    def forward(self, x):
        lead = x.shape[:-1]
        y = self.linear(x.reshape(*lead, self.channels, -1))  # vec's C columns, each of length d_in / C
        return y.reshape(*lead, -1)


def _token_block(d, h, channels, activation):
    return nn.Sequential(TokenMixing(d, h, channels), nn.GELU() if activation == "gelu" else nn.ReLU(),
                         TokenMixing(h, d, channels))


register("mixer", layer=lambda d_in, d_out, channels, activation: TokenMixing(d_in, d_out, channels),
         params=lambda d_in, d_out, channels, activation: (d_in // channels) * (d_out // channels),
         macs=lambda d_in, d_out, channels, activation: d_in * d_out // channels,
         block=_token_block,
         block_params=lambda d, h, channels, activation: 2 * (d // channels) * (h // channels),
         block_macs=lambda d, h, channels, activation: 2 * d * h // channels,
         hyper={"channels": 4, "activation": "gelu"}, cite="Hayase & Karakida 2024 (Mixer as a wide sparse MLP)")
