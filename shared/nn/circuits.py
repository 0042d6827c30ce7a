"""Feature-to-feature circuit attribution with transcoders (Dunefsky, Chlenski, Nanda 2024, section 3), in the
transformer of shared/nn/transformer.py (weightless RMSNorm, rotary attention, attention output scaled by
1 / sqrt(2 n_layer)).

A transcoder at layer l reads the normalised residual x = s h (s = 1 / rms(h), one scalar per token because the
RMSNorm has no weight) through its encoder: pre_j = f_enc,j . (s h - b_dec_in) + b_enc,j. Everything written into
h is a sum, so with the norm scales (and attention patterns) frozen at their values for the input, pre_j splits
exactly into one term per upstream component:

  residual   a transcoder feature i of an earlier layer, same token:  s_dst z_i(x) (f_dec,i . f_enc,j)
             an input-dependent scalar z_i times an input-invariant weight product
  OV         the same feature at a source token, carried by head h of an attention layer in between:
             s_dst c_attn A_h[dst, src] s_src z_i(src) (W_OV^h f_dec,i) . f_enc,j
  embedding  s_dst (W_E[token] . f_enc,j): the de-embedding W_E f_enc,j scores every vocabulary token at once
  biases     s_dst f_enc,j . b_dec_out of each earlier transcoder, -f_enc,j . b_dec_in + b_enc,j

`splice` replaces MLPs by transcoders (optionally ablating features), `norm_inputs` records the residual stream each
RMSNorm reads, `attention_probs` recomputes a layer's attention pattern, and the attribution functions compute the
terms above (per token, or summed over tokens).
"""
import contextlib
import math

import torch
from torch import nn

from shared.nn.transformer import apply_rotary


def norm_scale(h, eps=1e-8):
    """The frozen scale of the weightless RMSNorm at each token: 1 / sqrt(mean(h^2) + eps), shape h.shape[:-1]."""
    return torch.rsqrt(h.pow(2).mean(-1) + eps)


def weight_products(dec_src, enc_tgt):
    """The input-invariant part of residual attribution: (m_src, m_tgt) of f_dec,i . f_enc,j."""
    return dec_src @ enc_tgt.T


def residual_attribution(z_src, dec_src, enc_tgt, scale=None):
    """attr(i -> j) = scale * z_i * (f_dec,i . f_enc,j) per token: z_src (..., m_src) -> (..., m_src, m_tgt)."""
    attr = z_src[..., :, None] * weight_products(dec_src, enc_tgt)
    return attr if scale is None else attr * scale[..., None, None]


def ov_matrices(attn):
    """(H, d, d): head h maps the normalised residual v_in to its share of the attention output, W_O^h W_V^h."""
    d = attn.out.weight.shape[0]
    w_v = attn.qkv.weight[2 * d:].view(attn.n_head, attn.d_head, d)          # (H, d_head, d)
    w_o = attn.out.weight.view(d, attn.n_head, attn.d_head).permute(1, 0, 2)  # (H, d, d_head)
    return w_o @ w_v


def attention_probs(attn, x):
    """The causal attention pattern (B, H, T_dst, T_src) of shared.nn.transformer.Attention on its input x."""
    b, t, d = x.shape
    q, k, _ = attn.qkv(x).view(b, t, 3, attn.n_head, attn.d_head).permute(2, 0, 3, 1, 4)
    q, k = apply_rotary(q, attn.cos, attn.sin), apply_rotary(k, attn.cos, attn.sin)
    scores = q @ k.transpose(-1, -2) / math.sqrt(attn.d_head)
    mask = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
    return scores.masked_fill(~mask, float("-inf")).softmax(-1)


def ov_weight_products(ov, dec_src, enc_tgt):
    """The input-invariant part of OV attribution: (H, m_src, m_tgt) of (W_OV^h f_dec,i) . f_enc,j."""
    return torch.einsum("jd,hde,ie->hij", enc_tgt, ov, dec_src)


def ov_attribution(probs, z_src, dec_src, ov, enc_tgt, scale_src, scale_dst, attn_scale=1.0):
    """Per token pair and head: (B, H, T_dst, T_src, m_src, m_tgt) of
    attn_scale * s_dst A_h[dst, src] s_src z_i(src) (W_OV^h f_dec,i) . f_enc,j (small sizes only)."""
    w = ov_weight_products(ov, dec_src, enc_tgt)
    flow = attn_scale * scale_dst[:, None, :, None] * probs * scale_src[:, None, None, :]  # (B, H, T, T)
    return torch.einsum("bhts,bsi,hij->bhtsij", flow, z_src, w)


def ov_attribution_total(probs, z_src, dec_src, ov, enc_tgt, scale_src, scale_dst, attn_scale=1.0):
    """ov_attribution summed over batch, heads, destination and source tokens: (m_src, m_tgt), without
    materialising the per-pair tensor."""
    w = ov_weight_products(ov, dec_src, enc_tgt)
    flow = attn_scale * scale_dst[:, None, :, None] * probs * scale_src[:, None, None, :]
    carried = torch.einsum("bhts,bsi->hi", flow, z_src)  # each head's share of z_i that reaches some destination
    return torch.einsum("hi,hij->ij", carried, w)


def ov_attribution_per_target(probs, z_src, dec_src, ov, enc_tgt, scale_src, scale_dst, attn_scale=1.0):
    """ov_attribution summed over heads, source tokens and source features: (B, T_dst, m_tgt), without
    materialising the per-pair tensor or the (H, m_src, m_tgt) products (what all the source features carry into
    each target, per token: the sum over i is taken first, as the decoded vector z @ W_dec)."""
    decoded = z_src @ dec_src                                                  # (B, T_src, d)
    read = torch.einsum("hde,bse->bshd", ov, decoded) @ enc_tgt.T             # (B, T_src, H, m_tgt)
    flow = attn_scale * scale_dst[:, None, :, None] * probs * scale_src[:, None, None, :]
    return torch.einsum("bhts,bshj->btj", flow, read)


def residual_attribution_per_target(z_src, dec_src, enc_tgt, scale=None):
    """residual_attribution summed over source features: (..., m_tgt) = scale * (z @ W_dec) . f_enc,j."""
    attr = (z_src @ dec_src) @ enc_tgt.T
    return attr if scale is None else attr * scale[..., None]


def deembedding(embed_weight, enc_tgt):
    """(vocab, m_tgt): W_E f_enc,j, the direct (input-invariant) score of every token for each feature j."""
    return embed_weight @ enc_tgt.T


class SplicedMLP(nn.Module):
    """An MLP replaced by a transcoder; features in `ablate` (an index tensor) are zeroed before decoding. Records
    the last input's feature activations in `.z`."""

    def __init__(self, transcoder, ablate=None):
        super().__init__()
        self.transcoder, self.ablate, self.z = transcoder, ablate, None

    def forward(self, x):
        z = self.transcoder.encode(x)
        if self.ablate is not None:
            z = z.index_fill(-1, self.ablate, 0.0)
        self.z = z
        return self.transcoder.decode(z)


@contextlib.contextmanager
def splice(model, transcoders, ablate=None):
    """Within the block, model.blocks[l].mlp is SplicedMLP(transcoders[l], ablate.get(l)); restored after."""
    ablate = ablate or {}
    saved = {l: model.blocks[l].mlp for l in transcoders}
    try:
        for l, tc in transcoders.items():
            model.blocks[l].mlp = SplicedMLP(tc, ablate.get(l))
        yield {l: model.blocks[l].mlp for l in transcoders}
    finally:
        for l, mlp in saved.items():
            model.blocks[l].mlp = mlp


@contextlib.contextmanager
def norm_inputs(model):
    """Records the residual stream each RMSNorm reads: yields a dict filled by the forward pass with
    (l, 'attn') and (l, 'mlp') -> h (B, T, d) for block l, and 'final' for the last norm."""
    seen, calls, hooks = {}, [0] * len(model.blocks), []
    for l, block in enumerate(model.blocks):
        def hook(module, args, output, l=l):  # a block's norm serves attention first, then the MLP
            seen[(l, "attn") if calls[l] % 2 == 0 else (l, "mlp")] = args[0].detach()
            calls[l] += 1
        hooks.append(block.norm.register_forward_hook(hook))
    hooks.append(model.norm.register_forward_hook(lambda m, a, o: seen.__setitem__("final", a[0].detach())))
    try:
        yield seen
    finally:
        for h in hooks:
            h.remove()


def feature_attribution_total(model, streams, z_src, tc_src, layer_src, tc_tgt, layer_tgt, src=None, tgt=None):
    """Direct-path attribution of transcoder features of layer_src to the pre-activations of layer_tgt's transcoder,
    summed over every token of the batch the `streams` (norm_inputs) were recorded on: (m_src, m_tgt) for the
    feature indices `src`, `tgt` (default all). Residual path (same token) plus the OV path of every attention layer
    in between (layer_src < L <= layer_tgt), norm scales and attention patterns frozen at their recorded values."""
    if not layer_src < layer_tgt:
        raise ValueError(f"layer_src {layer_src} must precede layer_tgt {layer_tgt}")
    src = torch.arange(tc_src.n_features) if src is None else src
    tgt = torch.arange(tc_tgt.n_features) if tgt is None else tgt
    dec, enc, z = tc_src.W_dec[src], tc_tgt.W_enc[tgt], z_src[..., src]
    s_dst = norm_scale(streams[(layer_tgt, "mlp")])
    total = (z * s_dst[..., None]).flatten(0, -2).sum(0)[:, None] * weight_products(dec, enc)
    for L in range(layer_src + 1, layer_tgt + 1):
        block = model.blocks[L]
        h_in = streams[(L, "attn")]
        s_src = norm_scale(h_in)
        probs = attention_probs(block.attn, h_in * s_src[..., None])
        total = total + ov_attribution_total(probs, z, dec, ov_matrices(block.attn), enc, s_src, s_dst,
                                             block.attn_scale)
    return total
