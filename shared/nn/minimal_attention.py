"""Reduced self-attention and a small ViT-style classifier over image patches (Bermeitinger, Hrycej, Pavone, Kath,
Handschuh, "Reducing the Transformer Architecture to a Minimum", 2024, arXiv 2410.13732).

A new module rather than an edit of shared/nn/transformer.py (whose causal, rotary, fused-qkv `Attention` other
papers' jobs load): the attention here is non-causal by default, has no position rotation (the classifier adds
learned absolute position embeddings) and keeps each head's maps apart so that they can be collapsed.

One head h of `MinimalAttention` on tokens x_1..x_T (rows of x, width d) computes

    s_ij = scale * x_i^T W_QK^h x_j            p_ij = softmax_j(s_ij)            o_i = sum_h W_VO^h sum_j p_ij x_j

with the query-key form W_QK^h (d x d) parameterised as (`qk`):

    separate   W_Q^hT W_K^h, W_Q^h and W_K^h (d_k x d)          2 d d_k parameters per head (the standard head)
    collapsed  one free d x d matrix                          d^2
    symmetric  T + T^T - diag(T), T lower triangular          d (d + 1) / 2; s_ij = s_ji
    psd        T T^T, T lower triangular                      d (d + 1) / 2; s_ij = s_ji and s_ii = |T^T x_i|^2 >= 0

and the value-output map W_VO^h (d x d) as (`vo`):

    separate   W_O^h W_V^h, W_V^h (d_v x d), W_O^h (d x d_v)     2 d d_v per head (W_O = [W_O^1 .. W_O^H], d x H d_v)
    collapsed  one free d x d matrix                          d^2
    identity   I / H (no parameters): the output is the heads' mean of the attention-weighted inputs

`scale` is 1 / sqrt(d_k) for every form (d_k = d / H unless given), so a collapsed head with W_QK = W_Q^T W_K computes
exactly what the separate head computes (claim of the paper "under some conditions": with d_k = d the collapsed form
has no more parameters than the pair; with d_k < d it has more, and a higher rank).

`PatchClassifier` is a pre-norm encoder: patches (p x p x C, flattened) -> linear embedding + learned position
embedding -> n_layer blocks h <- h + attn(LN(h)) [; h <- h + MLP(LN(h)), GELU, width mlp_ratio d] -> LN -> mean over
tokens -> linear head. `mlp_ratio = 0` drops the MLP sub-layer (the paper's "no MLP"); `n_layer = 0` is the
embedding-only control. `count_parameters(...)` is the closed form of its trainable parameters.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

QK_FORMS = ("separate", "collapsed", "symmetric", "psd")
VO_FORMS = ("separate", "collapsed", "identity")


def tril_size(d):
    """Entries of a d x d lower triangle, diagonal included: the free parameters of a symmetric d x d matrix."""
    return d * (d + 1) // 2


def unpack_tril(packed, d):
    """(..., d (d + 1) / 2) -> (..., d, d) lower-triangular matrices (row-major order of torch.tril_indices)."""
    rows, cols = torch.tril_indices(d, d, device=packed.device)
    out = packed.new_zeros(*packed.shape[:-1], d, d)
    out[..., rows, cols] = packed
    return out


def attention_parameters(d, n_head=1, qk="separate", vo="separate", d_k=None, d_v=None):
    """Trainable parameters of one MinimalAttention (no biases)."""
    d_k, d_v = d_k or d // n_head, d_v or d // n_head
    per_qk = {"separate": 2 * d * d_k, "collapsed": d * d, "symmetric": tril_size(d), "psd": tril_size(d)}[qk]
    per_vo = {"separate": 2 * d * d_v, "collapsed": d * d, "identity": 0}[vo]
    return n_head * (per_qk + per_vo)


class MinimalAttention(nn.Module):
    def __init__(self, d_model, n_head=1, qk="separate", vo="separate", d_k=None, d_v=None, causal=False):
        super().__init__()
        if qk not in QK_FORMS or vo not in VO_FORMS:
            raise ValueError(f"qk must be one of {QK_FORMS} and vo one of {VO_FORMS}, got {qk!r}, {vo!r}")
        if (d_k is None or d_v is None) and d_model % n_head:
            raise ValueError(f"d_model {d_model} does not split into {n_head} heads")
        d, h = d_model, n_head
        self.d, self.n_head, self.qk, self.vo, self.causal = d, h, qk, vo, causal
        self.d_k, self.d_v = d_k or d // h, d_v or d // h
        self.scale = 1.0 / math.sqrt(self.d_k)
        if qk == "separate":
            self.w_q = nn.Parameter(torch.empty(h, self.d_k, d))
            self.w_k = nn.Parameter(torch.empty(h, self.d_k, d))
        elif qk == "collapsed":
            self.w_qk = nn.Parameter(torch.empty(h, d, d))
        else:
            self.qk_tril = nn.Parameter(torch.empty(h, tril_size(d)))
        if vo == "separate":
            self.w_v = nn.Parameter(torch.empty(h, self.d_v, d))
            self.w_o = nn.Parameter(torch.empty(h, d, self.d_v))
        elif vo == "collapsed":
            self.w_vo = nn.Parameter(torch.empty(h, d, d))
        self.reset_parameters()

    @torch.no_grad()
    def reset_parameters(self):
        """Separate maps N(0, 1/d) (W_O: N(0, 1/(H d_v))); the collapsed and symmetric forms N(0, tau^2) with tau chosen
        so that the initial scores of unit-variance inputs have the variance of the separate head's (tau = d_k^(1/4) / d
        for a free or symmetric matrix, tau = (3 d_k / d^3)^(1/4) for the triangle of T T^T)."""
        d, dk = self.d, self.d_k
        if self.qk == "separate":
            nn.init.normal_(self.w_q, std=d ** -0.5)
            nn.init.normal_(self.w_k, std=d ** -0.5)
        elif self.qk == "collapsed":
            nn.init.normal_(self.w_qk, std=dk ** 0.25 / d)
        elif self.qk == "symmetric":
            nn.init.normal_(self.qk_tril, std=dk ** 0.25 / d)
        else:
            nn.init.normal_(self.qk_tril, std=(3 * dk / d ** 3) ** 0.25)
        if self.vo == "separate":
            nn.init.normal_(self.w_v, std=d ** -0.5)
            nn.init.normal_(self.w_o, std=(self.n_head * self.d_v) ** -0.5)
        elif self.vo == "collapsed":
            nn.init.normal_(self.w_vo, std=d ** -0.5)
        return self

    def qk_matrices(self):
        """(H, d, d): each head's bilinear form W_QK^h (without `scale`)."""
        if self.qk == "separate":
            return torch.einsum("hkd,hke->hde", self.w_q, self.w_k)
        if self.qk == "collapsed":
            return self.w_qk
        t = unpack_tril(self.qk_tril, self.d)
        if self.qk == "psd":
            return t @ t.transpose(-1, -2)
        return t + t.transpose(-1, -2) - torch.diag_embed(torch.diagonal(t, dim1=-2, dim2=-1))

    def vo_matrices(self):
        """(H, d, d): each head's value-output map W_VO^h (identity: I / H)."""
        if self.vo == "separate":
            return self.w_o @ self.w_v
        if self.vo == "collapsed":
            return self.w_vo
        eye = torch.eye(self.d, device=self._device(), dtype=self._dtype())
        return (eye / self.n_head).expand(self.n_head, self.d, self.d)

    def _device(self):
        return next(iter(self.parameters()), torch.empty(0)).device

    def _dtype(self):
        return next(iter(self.parameters()), torch.empty(0)).dtype

    def scores(self, x):
        """(B, H, T, T) pre-softmax scores s_ij (scaled, unmasked) of inputs x (B, T, d)."""
        if self.qk == "separate":
            q = torch.einsum("btd,hkd->bhtk", x, self.w_q)
            k = torch.einsum("btd,hkd->bhtk", x, self.w_k)
            return self.scale * q @ k.transpose(-1, -2)
        xw = torch.einsum("btd,hde->bhte", x, self.qk_matrices())
        return self.scale * xw @ x.transpose(-1, -2).unsqueeze(1)

    def probabilities(self, x):
        s = self.scores(x)
        if self.causal:
            t = x.shape[1]
            s = s.masked_fill(torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1), float("-inf"))
        return s.softmax(-1)

    def forward(self, x):
        p = self.probabilities(x)  # (B, H, T, T)
        if self.vo == "identity":
            return (p @ x.unsqueeze(1)).mean(1)
        if self.vo == "separate":
            v = torch.einsum("btd,hvd->bhtv", x, self.w_v)
            return torch.einsum("bhtv,hdv->btd", p @ v, self.w_o)
        mixed = p @ x.unsqueeze(1)  # (B, H, T, d)
        return torch.einsum("bhte,hde->btd", mixed, self.w_vo)


class MLP(nn.Module):
    def __init__(self, d, hidden):
        super().__init__()
        self.up, self.down = nn.Linear(d, hidden), nn.Linear(hidden, d)

    def forward(self, x):
        return self.down(F.gelu(self.up(x)))


class ReducedBlock(nn.Module):
    """Pre-norm encoder block; mlp_ratio 0: attention only (the MLP sub-layer and its LayerNorm are absent)."""

    def __init__(self, d, n_head, qk, vo, mlp_ratio, d_k=None, d_v=None, causal=False):
        super().__init__()
        self.norm1 = nn.LayerNorm(d)
        self.attn = MinimalAttention(d, n_head, qk, vo, d_k, d_v, causal)
        self.norm2 = nn.LayerNorm(d) if mlp_ratio else None
        self.mlp = MLP(d, mlp_ratio * d) if mlp_ratio else None

    def forward(self, h, record=None):
        x = self.norm1(h)
        if record is not None:
            record.append(x)
        h = h + self.attn(x)
        return h + self.mlp(self.norm2(h)) if self.mlp is not None else h


def patches(images, patch):
    """(B, C, H, W) -> (B, (H/p)(W/p), C p p): non-overlapping p x p patches, row-major over the grid."""
    b, c, hgt, wid = images.shape
    if hgt % patch or wid % patch:
        raise ValueError(f"image {hgt}x{wid} does not split into {patch}x{patch} patches")
    return F.unfold(images, kernel_size=patch, stride=patch).transpose(1, 2)


class PatchClassifier(nn.Module):
    def __init__(self, image_size, channels, patch, d, n_layer, n_head, n_classes, qk="separate", vo="separate",
                 mlp_ratio=4, d_k=None, d_v=None):
        super().__init__()
        self.patch = patch
        tokens, d_patch = (image_size // patch) ** 2, channels * patch * patch
        self.embed = nn.Linear(d_patch, d)
        self.position = nn.Parameter(0.02 * torch.randn(tokens, d))
        self.blocks = nn.ModuleList(ReducedBlock(d, n_head, qk, vo, mlp_ratio, d_k, d_v) for _ in range(n_layer))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, n_classes)

    def forward(self, images, record=None):
        """Logits (B, classes) of images (B, C, H, W). With a list `record`, appends each block's attention input."""
        h = self.embed(patches(images, self.patch)) + self.position
        for block in self.blocks:
            h = block(h, record)
        return self.head(self.norm(h).mean(1))

    def attention_inputs(self, images):
        """The LayerNorm'd residual each block's attention reads, [(B, T, d)] per layer."""
        record = []
        self(images, record)
        return record


def count_parameters(image_size, channels, patch, d, n_layer, n_head, n_classes, qk="separate", vo="separate",
                     mlp_ratio=4, d_k=None, d_v=None):
    """Closed form of sum(p.numel()) of a PatchClassifier."""
    tokens, d_patch = (image_size // patch) ** 2, channels * patch * patch
    embed = d_patch * d + d + tokens * d
    block = 2 * d + attention_parameters(d, n_head, qk, vo, d_k, d_v)
    if mlp_ratio:
        block += 2 * d + (d * mlp_ratio * d + mlp_ratio * d) + (mlp_ratio * d * d + d)
    return embed + n_layer * block + 2 * d + d * n_classes + n_classes
