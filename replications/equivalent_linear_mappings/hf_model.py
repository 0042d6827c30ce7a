"""Full tier: a Qwen3 model from transformers, run layer by layer from its own modules' weights, with every A(x)
factor passed through one `ConstantGate` module (shared.nn.dynamic_linear), so that shared.nn.dynamic_linear's hooks freeze it. Nothing in the
installed transformers is patched (the paper's code copies modified modeling files over the package).

Softmax inside HF attention is a function, not a module, so no hook can reach it. The readout therefore recomputes
each layer from the HF modules' parameters, as Qwen3's eager path does (RMSNorm, q/k RMSNorm, RoPE from the model's
own rotary module, grouped-query attention, SwiGLU MLP), and wraps the three input-dependent factors in `ConstantGate`:
the RMSNorm scale rsqrt(mean(x^2) + eps), the attention probabilities (the paper detaches Q and K, which freezes
the same softmax) and the whole SwiGLU gate branch silu(W_gate x). Every other operation is linear in the residual.

Two differences from transformers' forward, both rounding: Qwen3RMSNorm and eager softmax compute in float32 and
cast back, the readout stays in the model's dtype (float64), so the readout matches hidden states to ~1e-7 (I3).
"""
import torch
import torch.nn.functional as F
from torch import nn

from shared.nn.dynamic_linear import ConstantGate


def rms(module, x):
    """Qwen3RMSNorm's scale, in x's dtype."""
    return torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + module.variance_epsilon)


class QwenReadout(nn.Module):
    """Input embeddings (N, T, d) -> the final norm's output at the last position (the LM head's input); with
    `upto=l`, the final norm applied to the residual after layer l (the paper's layer-wise maps)."""

    def __init__(self, causal_lm):
        super().__init__()
        from transformers.models.qwen3.modeling_qwen3 import apply_rotary_pos_emb, repeat_kv
        cfg = causal_lm.config
        if cfg.hidden_act != "silu" or getattr(cfg, "use_sliding_window", False) or cfg.attention_bias:
            raise ValueError("QwenReadout covers Qwen3 with a SiLU gate, full causal attention and no biases")
        self.hf, self.frozen = causal_lm, ConstantGate()
        self.rotate, self.repeat = apply_rotary_pos_emb, repeat_kv

    @property
    def unembed(self):
        return self.hf.lm_head.weight

    @property
    def n_layer(self):
        return len(self.hf.model.layers)

    def norm(self, module, x):
        return module.weight * (x * self.frozen(rms(module, x)))

    def attention(self, attn, x, cos, sin):
        b, t, _ = x.shape
        shape = (b, t, -1, attn.head_dim)
        # q and k only feed the probabilities, which are frozen whole: their norms need no freezing of their own
        q, k = attn.q_proj(x).view(shape), attn.k_proj(x).view(shape)
        q, k = attn.q_norm.weight * q * rms(attn.q_norm, q), attn.k_norm.weight * k * rms(attn.k_norm, k)
        q, k = self.rotate(q.transpose(1, 2), k.transpose(1, 2), cos, sin)
        k = self.repeat(k, attn.num_key_value_groups)
        v = self.repeat(attn.v_proj(x).view(shape).transpose(1, 2), attn.num_key_value_groups)
        causal = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
        scores = (q @ k.transpose(2, 3) * attn.scaling).masked_fill(~causal, float("-inf"))
        probs = self.frozen(scores.softmax(-1))
        return attn.o_proj((probs @ v).transpose(1, 2).reshape(b, t, -1))

    def mlp(self, mlp, x):
        return mlp.down_proj(self.frozen(F.silu(mlp.gate_proj(x))) * mlp.up_proj(x))

    def forward(self, emb, upto=None):
        positions = torch.arange(emb.shape[1], device=emb.device)[None].expand(emb.shape[0], -1)
        cos, sin = self.hf.model.rotary_emb(emb, positions)
        h = emb
        for i, layer in enumerate(self.hf.model.layers):
            h = h + self.attention(layer.self_attn, self.norm(layer.input_layernorm, h), cos, sin)
            h = h + self.mlp(layer.mlp, self.norm(layer.post_attention_layernorm, h))
            if i == upto:
                break
        return self.norm(self.hf.model.norm, h)[:, -1]
