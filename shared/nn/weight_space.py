"""Deep weight spaces (Navon et al., ICML 2023): equivariant linear layers between weight spaces of an MLP, and DWSNet.

An MLP with layer widths d_0, ..., d_M has weights W_m (d_m, d_{m-1}) and biases b_m (d_m). Hidden neurons (layers
1 .. M-1) can be permuted without changing the function; input (d_0) and output (d_M) neurons cannot. Batched with
C feature channels: weights[m-1] is (B, d_m, d_{m-1}, C) and biases[m-1] is (B, d_m, C) (paper orientation, not the
official code's transposed one). Every tensor is indexed by neuron layers: W_m by (m, m-1), b_m by (m,).

Every linear map between such tensors that commutes with the hidden permutations is a sum of one term per
(input tensor, output tensor, subset S of the hidden layers both index): pool (mean) the input over its hidden
axes outside S, apply a dense linear map over the channels and the free (input/output-layer) axes, broadcast over
the output's hidden axes outside S. For one permuted index the equivariant maps R^d -> R^d are spanned by the
identity and the all-ones matrix (kept / pooled-and-broadcast), R^d -> R by the sum and R -> R^d by the copy; each
group acts on at most one axis of each tensor, so these products span everything (Theorem 5.1: pooling,
broadcasting, dense maps on free indices, DeepSets and the Hartford et al. layer for W_m -> W_m). The equivariant
bias is constant over hidden axes. `DWSLayer` holds all these terms; its parameter count depends on M, d_0, d_M and
the channels, never on the hidden widths (`dws_param_count`).
"""
import math
from itertools import pairwise

import torch
from torch import nn


def tensor_axes(n_layers):
    """Neuron-layer index of each axis of every weight-space tensor: W_1 .. W_M, then b_1 .. b_M."""
    return [(m, m - 1) for m in range(1, n_layers + 1)] + [(m,) for m in range(1, n_layers + 1)]


def _hidden(layer, n_layers):
    return 0 < layer < n_layers


def _terms(n_layers):
    """(input tensor, output tensor, kept hidden layers) of every basis term of the layer, in a fixed order."""
    axes = tensor_axes(n_layers)
    out = []
    for j, y in enumerate(axes):
        for i, x in enumerate(axes):
            shared = [k for k in x if k in y and _hidden(k, n_layers)]
            for mask in range(2 ** len(shared)):
                out.append((i, j, tuple(k for b, k in enumerate(shared) if mask >> b & 1)))
    return out


def _free_size(axes, free, n_layers):
    return math.prod(free[k] for k in axes if not _hidden(k, n_layers))


def dws_param_count(n_layers, d_in, d_out, c_in, c_out, bias=True):
    """Parameters of DWSLayer: per term (free size in x c_in) (free size out x c_out), plus a bias per output tensor."""
    free, axes = {0: d_in, n_layers: d_out}, tensor_axes(n_layers)
    count = sum(_free_size(axes[i], free, n_layers) * c_in * _free_size(axes[j], free, n_layers) * c_out
                for i, j, _ in _terms(n_layers))
    return count + (sum(_free_size(a, free, n_layers) * c_out for a in axes) if bias else 0)


class DWSLayer(nn.Module):
    """The complete G-equivariant affine map between weight spaces of an M-layer MLP with d_in inputs and d_out
    outputs, c_in -> c_out channels. forward(weights, biases) -> (weights, biases), lists of M tensors each."""

    def __init__(self, n_layers, d_in, d_out, c_in, c_out, bias=True):
        super().__init__()
        if n_layers < 2:
            raise ValueError("a weight space with permutable neurons needs at least 2 layers")
        self.n_layers, self.c_out = n_layers, c_out
        self.free = {0: d_in, n_layers: d_out}
        self.axes = tensor_axes(n_layers)
        self.terms = _terms(n_layers)
        fan = {}
        for i, j, _ in self.terms:  # inputs summed into each output tensor: scales the init
            fan[j] = fan.get(j, 0) + _free_size(self.axes[i], self.free, n_layers) * c_in
        self.maps = nn.ModuleList()
        for i, j, _ in self.terms:
            lin = nn.Linear(_free_size(self.axes[i], self.free, n_layers) * c_in,
                            _free_size(self.axes[j], self.free, n_layers) * c_out, bias=False)
            nn.init.normal_(lin.weight, std=fan[j] ** -0.5)
            self.maps.append(lin)
        self.biases = nn.ParameterList(
            [nn.Parameter(torch.zeros(_free_size(a, self.free, n_layers) * c_out)) for a in self.axes]) if bias else None

    def _term(self, x, x_axes, y_axes, keep, lin):
        hidden = lambda k: _hidden(k, self.n_layers)
        axes = list(x_axes)
        for pos in reversed(range(len(axes))):  # pool the hidden axes the output does not keep
            if hidden(axes[pos]) and axes[pos] not in keep:
                x = x.mean(1 + pos)
                axes.pop(pos)
        kept = [k for k in axes if hidden(k)]
        free_in = [k for k in axes if not hidden(k)]
        x = x.permute(0, *[1 + axes.index(k) for k in kept + free_in], len(axes) + 1)
        x = x.reshape(*x.shape[: 1 + len(kept)], -1)  # free input axes join the channels
        y = lin(x)
        free_out = [k for k in y_axes if not hidden(k)]
        y = y.reshape(*y.shape[:-1], *[self.free[k] for k in free_out], self.c_out)
        current = kept + free_out
        for k in y_axes:  # broadcast over the output's hidden axes that were pooled or never there
            if k not in current:
                y = y.unsqueeze(-2)
                current.append(k)
        return y.permute(0, *[1 + current.index(k) for k in y_axes], len(current) + 1)

    def forward(self, weights, biases):
        xs = list(weights) + list(biases)
        sizes = {}
        for t, a in zip(xs, self.axes):
            sizes.update({k: n for k, n in zip(a, t.shape[1:-1])})
        batch = xs[0].shape[0]
        out = [None] * len(xs)
        for (i, j, keep), lin in zip(self.terms, self.maps):
            term = self._term(xs[i], self.axes[i], self.axes[j], keep, lin)
            out[j] = term if out[j] is None else out[j] + term
        for j, a in enumerate(self.axes):
            if self.biases is not None:
                free_out = [k for k in a if not _hidden(k, self.n_layers)]
                b = self.biases[j].reshape(*[self.free[k] for k in free_out], self.c_out)
                b = b.reshape(*[self.free[k] if k in free_out else 1 for k in a], self.c_out)
                out[j] = out[j] + b
            out[j] = out[j].expand(batch, *[sizes[k] for k in a], self.c_out)
        m = self.n_layers
        return out[:m], out[m:]


class InvariantPool(nn.Module):
    """The complete G-invariant linear layer's inputs: each tensor averaged over its hidden axes, free axes and
    channels flattened, all concatenated (then any dense map is invariant)."""

    def __init__(self, n_layers, d_in, d_out, channels):
        super().__init__()
        self.n_layers, self.axes = n_layers, tensor_axes(n_layers)
        free = {0: d_in, n_layers: d_out}
        self.out_features = sum(_free_size(a, free, n_layers) * channels for a in self.axes)

    def forward(self, weights, biases):
        feats = []
        for t, a in zip(list(weights) + list(biases), self.axes):
            dims = [1 + p for p, k in enumerate(a) if _hidden(k, self.n_layers)]
            feats.append((t.mean(dims) if dims else t).flatten(1))
        return torch.cat(feats, dim=1)


class DWSNet(nn.Module):
    """Equivariant DWS layers with ReLU between, the invariant pooling, and an MLP head (the paper's invariant model).
    Takes weights (B, d_m, d_{m-1}) and biases (B, d_m) without a channel axis (one is added)."""

    def __init__(self, n_layers, d_in, d_out, channels, depth, n_outputs, head_hidden=64):
        super().__init__()
        dims = [1] + [channels] * depth
        self.layers = nn.ModuleList(DWSLayer(n_layers, d_in, d_out, a, b) for a, b in pairwise(dims))
        self.pool = InvariantPool(n_layers, d_in, d_out, dims[-1])
        self.head = nn.Sequential(nn.Linear(self.pool.out_features, head_hidden), nn.ReLU(),
                                  nn.Linear(head_hidden, n_outputs))

    def features(self, weights, biases):
        w, b = [t.unsqueeze(-1) for t in weights], [t.unsqueeze(-1) for t in biases]
        for i, layer in enumerate(self.layers):
            if i:
                w, b = [torch.relu(t) for t in w], [torch.relu(t) for t in b]
            w, b = layer(w, b)
        return self.pool(w, b)

    def forward(self, weights, biases):
        return self.head(self.features(weights, biases))


def random_hidden_permutations(widths, generator=None):
    """One permutation per hidden layer (widths = d_0 .. d_M): [perm_1, ..., perm_{M-1}]."""
    return [torch.randperm(d, generator=generator) for d in widths[1:-1]]


def permute_weight_space(weights, biases, perms, batched=True):
    """The group action (Eq. 5): hidden layer m's neurons reordered by perms[m-1] (new[i] = old[perm[i]]), on the
    rows of W_m and b_m and the columns of W_{m+1}. `batched`: tensors carry a leading axis (and maybe channels)."""
    off = 1 if batched else 0
    n = len(weights)
    w, b = list(weights), list(biases)
    for m, p in enumerate(perms, start=1):  # hidden layer m
        w[m - 1] = w[m - 1].index_select(off, p)
        b[m - 1] = b[m - 1].index_select(off, p)
        if m < n:
            w[m] = w[m].index_select(off + 1, p)
    return w, b


def mlp_forward(weights, biases, x, activation=torch.relu):
    """f(x) of the MLP with weights (d_m, d_{m-1}) and biases (d_m); x (P, d_0); no activation after the last layer."""
    for m, (w, b) in enumerate(zip(weights, biases)):
        x = x @ w.T + b
        if m < len(weights) - 1:
            x = activation(x)
    return x


# ---- completeness: the layer's span against the space of all equivariant linear maps (small widths, float64) ----
def _flatten(weights, biases):
    return torch.cat([t.reshape(-1) for t in list(weights) + list(biases)])


def _unflatten(v, widths):
    """(weights, biases) with batch 1 and one channel from a flat vector of the weight space."""
    shapes = [(1, b, a, 1) for a, b in pairwise(widths)] + [(1, b, 1) for b in widths[1:]]
    out, i = [], 0
    for s in shapes:
        k = math.prod(s)
        out.append(v[i:i + k].reshape(s))
        i += k
    m = len(widths) - 1
    return out[:m], out[m:]


def commutant_dimension(widths):
    """dim {A : A g = g A for every hidden permutation g} on the weight space of an MLP with these widths, from two
    generators of each S_d (a swap and a cycle), as n^2 minus the rank of the stacked constraints vec(gA - Ag) = 0."""
    n = sum(a * b + b for a, b in pairwise(widths))
    basis = torch.eye(n, dtype=torch.float64)
    eye, rows = basis, []
    for layer, d in enumerate(widths[1:-1]):
        for perm in (torch.tensor([1, 0, *range(2, d)]), torch.roll(torch.arange(d), 1)):
            perms = [torch.arange(e) for e in widths[1:-1]]
            perms[layer] = perm
            g = torch.stack([_flatten(*permute_weight_space(*_unflatten(basis[k], widths), perms))
                             for k in range(n)], 1)
            rows.append(torch.kron(eye, g) - torch.kron(g.T.contiguous(), eye))
    return n * n - int(torch.linalg.matrix_rank(torch.cat(rows)))


def layer_span_rank(widths):
    """Rank of the linear maps a bias-free one-channel DWSLayer can express on this weight space (the layer is linear
    in its parameters: the rank of the Jacobian of its matrix with respect to them)."""
    layer = DWSLayer(len(widths) - 1, widths[0], widths[-1], 1, 1, bias=False).double()
    n = sum(a * b + b for a, b in pairwise(widths))
    basis = torch.eye(n, dtype=torch.float64)

    def matrix(params):
        return torch.stack([_flatten(*torch.func.functional_call(layer, params, _unflatten(basis[k], widths)))
                            for k in range(n)], 1).reshape(-1)

    jac = torch.func.jacrev(matrix)({k: v.detach() for k, v in layer.named_parameters()})
    return int(torch.linalg.matrix_rank(torch.cat([j.reshape(n * n, -1) for j in jac.values()], 1)))
