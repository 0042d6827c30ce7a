"""A small decoder-only transformer with the block of Pearce et al. (2025), App G.2:

    h <- h + attn(norm(h)) / sqrt(2 n_layer)       norm = RMSNorm without a learnable weight
    h <- h + mlp(norm(h))                          mlp  = down(Bilinear(x)), no bias; or ReGLU / SwiGLU
    logits = unembed(norm(h))                      untied from the token embedding

Attention uses rotary position embeddings (no learned positions). `forward(tokens, cache=...)` records each
layer's MLP input (the normalized residual: the space the bilinear weights act on) and MLP output, which is what
the paper's SAEs are trained on ("mlp-in" / "mlp-out").
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

from shared.nn.bilinear import BilinearMLP, RMSNorm

MLP_GATES = {"bilinear": None, "reglu": "relu", "swiglu": "silu"}


def rotary_tables(n_ctx, d_head, base=10000.0):
    """cos and sin tables (n_ctx, d_head / 2) for rotating pairs of channels by position-dependent angles."""
    inv_freq = base ** (-torch.arange(0, d_head, 2, dtype=torch.float64) / d_head)
    angles = torch.arange(n_ctx, dtype=torch.float64)[:, None] * inv_freq[None, :]
    return angles.cos(), angles.sin()


def apply_rotary(x, cos, sin):
    """Rotate channel pairs (x[2i], x[2i+1]) of x (..., T, d_head) by the angles of their positions."""
    x1, x2 = x[..., 0::2], x[..., 1::2]
    cos, sin = cos[: x.shape[-2]].to(x.dtype), sin[: x.shape[-2]].to(x.dtype)
    return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)


class Attention(nn.Module):
    def __init__(self, d_model, n_head, n_ctx):
        super().__init__()
        if d_model % n_head or (d_model // n_head) % 2:
            raise ValueError(f"d_model {d_model} must split into {n_head} heads of even size")
        self.n_head, self.d_head = n_head, d_model // n_head
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.out = nn.Linear(d_model, d_model, bias=False)
        cos, sin = rotary_tables(n_ctx, self.d_head)
        self.register_buffer("cos", cos.float(), persistent=False)
        self.register_buffer("sin", sin.float(), persistent=False)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.n_head, self.d_head).permute(2, 0, 3, 1, 4)
        q, k = apply_rotary(q, self.cos, self.sin), apply_rotary(k, self.cos, self.sin)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(y.transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    def __init__(self, d_model, d_hidden, n_head, n_ctx, n_layer, mlp="bilinear"):
        super().__init__()
        if mlp not in MLP_GATES:
            raise ValueError(f"mlp must be one of {list(MLP_GATES)}, got {mlp!r}")
        self.norm = RMSNorm(d_model)  # weightless, so one module serves both sub-layers
        self.attn = Attention(d_model, n_head, n_ctx)
        self.mlp = BilinearMLP(d_model, d_hidden, bias=False, gate=MLP_GATES[mlp])
        self.attn_scale = 1.0 / math.sqrt(2 * n_layer)

    def forward(self, h, record=None):
        h = h + self.attn_scale * self.attn(self.norm(h))
        x = self.norm(h)
        y = self.mlp(x)
        if record is not None:
            record(x, y)
        return h + y


class Transformer(nn.Module):
    def __init__(self, vocab_size, d_model=512, d_hidden=2048, n_head=8, n_layer=6, n_ctx=256, mlp="bilinear"):
        super().__init__()
        self.n_ctx = n_ctx
        self.embed = nn.Embedding(vocab_size, d_model)
        self.blocks = nn.ModuleList(Block(d_model, d_hidden, n_head, n_ctx, n_layer, mlp) for _ in range(n_layer))
        self.norm = RMSNorm(d_model)
        self.unembed = nn.Linear(d_model, vocab_size, bias=False)
        self.apply(_gpt2_init)

    def forward(self, tokens, cache=None, layers=None):
        """Logits (B, T, vocab). With a dict `cache`, stores cache[(layer, "mlp_in" / "mlp_out")] for `layers`
        (default: all), detached."""
        if tokens.shape[-1] > self.n_ctx:
            raise ValueError(f"sequence length {tokens.shape[-1]} exceeds n_ctx {self.n_ctx}")
        h = self.embed(tokens)
        for i, block in enumerate(self.blocks):
            record = None
            if cache is not None and (layers is None or i in layers):
                record = lambda x, y, i=i: cache.update({(i, "mlp_in"): x.detach(), (i, "mlp_out"): y.detach()})
            h = block(h, record)
        return self.unembed(self.norm(h))

    def loss(self, tokens):
        """Mean next-token cross-entropy over a batch of windows (B, T + 1)."""
        logits = self(tokens[:, :-1])
        return F.cross_entropy(logits.flatten(0, 1), tokens[:, 1:].flatten())


def _gpt2_init(module):
    """GPT-2 init (App G.2: 'gpt2' init): N(0, 0.02) for every weight matrix and embedding."""
    if isinstance(module, (nn.Linear, nn.Embedding)):
        nn.init.normal_(module.weight, std=0.02)
