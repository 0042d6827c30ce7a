"""A GPT-2-style decoder (Radford et al. 2019, as in nanoGPT), with a residual-stream cache for direct logit attribution.

    h_0 = wte[x] + wpe[pos]                                     learned absolute positions
    h <- h + attn(ln_1(h))      q, k read ln_1's Q/K path, v its V path (the same for a real LayerNorm)
    h <- h + mlp(ln_2(h))       mlp = c_proj(gelu(c_fc(.))), 4 x d_model, biases everywhere
    logits = ln_f(h) @ wte^T    tied embeddings (or an untied unembedding with a bias, for folded models)

Pre-LN blocks with a real LayerNorm (gamma, beta); GPT-2 init (normal 0.02, residual projections 0.02 / sqrt(2 L)).
`loss(windows)` puts a BOS token at position 0 of every window: the inputs are [BOS] + windows[:, :-1] and the
targets the windows, so position 0 is always the same token, as GPT-2's first position is in effect.

The norm is a constructor argument (`norm(d_model)`, called as `norm(x, path)` with path "qk", "v" or None), so
shared.nn.norm_removal can put a FakeLayerNorm with switchable paths in its place, or an identity after folding.
`forward(tokens, cache={})` records the residual stream ("embed", (l, "resid_mid"), (l, "resid_post")), each
component's output (("attn", l), ("mlp", l)) and the final residual ("resid_final").
"""
import math

import torch
import torch.nn.functional as F
from torch import nn


class LayerNorm(nn.Module):
    """LayerNorm with gamma and beta; the `path` argument is ignored (both ln_1 paths see the same map)."""

    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))

    def forward(self, x, path=None):
        return F.layer_norm(x, x.shape[-1:], self.weight, self.bias, self.eps)


class GPT2Attention(nn.Module):
    """Causal multi-head attention with GPT-2's fused c_attn (q, k, v) and c_proj, both with biases. Queries and keys
    are computed from x_qk, values from x_v (shared.transformer.Attention is rotary and bias-free, so not reused)."""

    def __init__(self, d_model, n_head):
        super().__init__()
        if d_model % n_head:
            raise ValueError(f"d_model {d_model} must split into {n_head} heads")
        self.n_head, self.d_head = n_head, d_model // n_head
        self.c_attn = nn.Linear(d_model, 3 * d_model)
        self.c_proj = nn.Linear(d_model, d_model)

    def forward(self, x_qk, x_v):
        b, t, d = x_qk.shape
        if x_v is x_qk:
            q, k, v = self.c_attn(x_qk).split(d, dim=-1)
        else:
            w, c = self.c_attn.weight, self.c_attn.bias
            q, k = F.linear(x_qk, w[: 2 * d], c[: 2 * d]).split(d, dim=-1)
            v = F.linear(x_v, w[2 * d:], c[2 * d:])
        q, k, v = (z.view(b, t, self.n_head, self.d_head).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(y.transpose(1, 2).reshape(b, t, d))


class GPT2MLP(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.c_fc = nn.Linear(d_model, 4 * d_model)
        self.c_proj = nn.Linear(4 * d_model, d_model)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))  # GPT-2's gelu_new


class GPT2Block(nn.Module):
    def __init__(self, d_model, n_head, norm=LayerNorm):
        super().__init__()
        self.ln_1 = norm(d_model)
        self.attn = GPT2Attention(d_model, n_head)
        self.ln_2 = norm(d_model)
        self.mlp = GPT2MLP(d_model)

    def forward(self, h, cache=None, layer=None):
        x_qk = self.ln_1(h, "qk")
        x_v = self.ln_1(h, "v")
        if torch.equal(x_qk, x_v):
            x_v = x_qk
        a = self.attn(x_qk, x_v)
        h = h + a
        m = self.mlp(self.ln_2(h))
        if cache is not None:
            cache["attn", layer], cache["mlp", layer], cache[layer, "resid_mid"] = a, m, h
        h = h + m
        if cache is not None:
            cache[layer, "resid_post"] = h
        return h


class GPT2(nn.Module):
    def __init__(self, vocab_size, d_model=768, n_head=12, n_layer=12, n_ctx=1024, bos=1, norm=LayerNorm,
                 tie_embeddings=True):
        super().__init__()
        self.n_ctx, self.n_layer, self.bos = n_ctx, n_layer, bos
        self.wte = nn.Embedding(vocab_size, d_model)
        self.wpe = nn.Embedding(n_ctx, d_model)
        self.blocks = nn.ModuleList(GPT2Block(d_model, n_head, norm) for _ in range(n_layer))
        self.ln_f = norm(d_model)
        self.unembed = None if tie_embeddings else nn.Linear(d_model, vocab_size)
        self.apply(self._init)
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * n_layer))

    @staticmethod
    def _init(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, 0.0, 0.02)
            if getattr(module, "bias", None) is not None:
                nn.init.zeros_(module.bias)

    def readout(self, h):
        """Logits of a final residual stream h: ln_f then the (tied or untied) unembedding."""
        x = self.ln_f(h)
        return x @ self.wte.weight.T if self.unembed is None else self.unembed(x)

    def forward(self, tokens, cache=None):
        t = tokens.shape[1]
        if t > self.n_ctx:
            raise ValueError(f"{t} tokens exceed the context of {self.n_ctx}")
        h = self.wte(tokens) + self.wpe(torch.arange(t, device=tokens.device))
        if cache is not None:
            cache["embed"] = h
        for layer, block in enumerate(self.blocks):
            h = block(h, cache, layer)
        if cache is not None:
            cache["resid_final"] = h
        return self.readout(h)

    def inputs(self, windows):
        """[BOS] + windows[:, :-1]: the model's input for predicting `windows` (position 0 is always BOS)."""
        bos = torch.full_like(windows[:, :1], self.bos)
        return torch.cat([bos, windows[:, :-1]], dim=1)

    def loss(self, windows):
        """Mean next-token cross-entropy of predicting every token of `windows` (n, T <= n_ctx) after a BOS."""
        logits = self(self.inputs(windows))
        return F.cross_entropy(logits.flatten(0, 1), windows.flatten())
