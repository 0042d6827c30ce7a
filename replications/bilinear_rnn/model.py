"""Models of "Revisiting Bi-Linear State Transitions in Recurrent Neural Networks" (Ebrahimi & Memisevic, 2025).

    StateTracker   one-hot token x_t -> h_t = A(x_t) h_{t-1} (shared.nn.recurrent.BilinearRNN) -> logits W u_t + c,
                   u_t = h_t / |h_t|: a prediction of the automaton's state after every token
    LSTMTracker    embedding -> LSTM -> linear readout                                    (baseline)
    Transformer    embedding + sinusoidal positions -> causal pre-norm encoder -> readout   (baseline)
    MambaTracker   embedding -> Mamba blocks (mambapy, pure PyTorch) -> readout           (baseline)

Tokens enter the bilinear models one-hot (D = vocabulary), so A(x) for token v is one learned matrix A_v (full),
or that matrix constrained to the variant's structure. The readout has a bias and sees only the direction of h,
so renormalizing h at any step changes no prediction.

The additive ablation trains through the unnormalized recurrence (mode "plain"), as the paper trains, so that its
inference-time renormalization is applied to the function it was trained as. The pure models train in mode
"exact", the same function without overflow; at lengths 2-10 the two modes agree up to float rounding.
"""
import math

import torch
from torch import nn

from shared.nn.recurrent import BilinearRNN

BASELINES = ("lstm", "transformer", "mamba")


class StateTracker(nn.Module):
    def __init__(self, vocab, n_states, d_hidden, variant, rank=None, block=None, additive=False):
        super().__init__()
        self.vocab = vocab
        self.rnn = BilinearRNN(vocab, d_hidden, variant, rank=rank, block=block, additive=additive)
        self.readout = nn.Linear(d_hidden, n_states)
        self.train_mode = "plain" if additive else "exact"  # the forward's mode when the caller names none

    def one_hot(self, tokens):
        # a comparison, not F.one_hot, so that torch.func.vmap can batch it
        return (tokens.unsqueeze(-1) == torch.arange(self.vocab, device=tokens.device)).to(self.readout.weight.dtype)

    def forward(self, tokens, mode=None):
        units, _ = self.rnn(self.one_hot(tokens), mode=mode or self.train_mode)
        return self.readout(units)


class LSTMTracker(nn.Module):
    def __init__(self, vocab, n_states, d_hidden, layers=1):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_hidden)
        self.lstm = nn.LSTM(d_hidden, d_hidden, num_layers=layers, batch_first=True)
        self.readout = nn.Linear(d_hidden, n_states)

    def forward(self, tokens):
        return self.readout(self.lstm(self.embed(tokens))[0])


class TransformerTracker(nn.Module):
    """Causal pre-norm Transformer; sinusoidal positions so that it can at least be run at unseen lengths."""

    def __init__(self, vocab, n_states, d_hidden, layers=2, heads=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_hidden)
        layer = nn.TransformerEncoderLayer(d_hidden, heads, 4 * d_hidden, dropout=0.0, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_hidden)
        self.readout = nn.Linear(d_hidden, n_states)

    def forward(self, tokens):
        T, d = tokens.shape[1], self.embed.embedding_dim
        position = torch.arange(T, device=tokens.device, dtype=torch.float32)[:, None]
        freq = torch.exp(torch.arange(0, d, 2, device=tokens.device) * (-math.log(10000.0) / d))
        pe = torch.zeros(T, d, device=tokens.device)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(position * freq), torch.cos(position * freq)
        mask = nn.Transformer.generate_square_subsequent_mask(T, device=tokens.device)
        return self.readout(self.norm(self.encoder(self.embed(tokens) + pe, mask=mask, is_causal=True)))


class MambaTracker(nn.Module):
    def __init__(self, vocab, n_states, d_hidden, layers=1):
        super().__init__()
        from mambapy.mamba import Mamba, MambaConfig  # imported here: only the full tier's baselines need it

        self.embed = nn.Embedding(vocab, d_hidden)
        self.mamba = Mamba(MambaConfig(d_model=d_hidden, n_layers=layers, pscan=False))
        self.readout = nn.Linear(d_hidden, n_states)

    def forward(self, tokens):
        return self.readout(self.mamba(self.embed(tokens)))


def build(spec):
    """A model from a run spec: {"model": variant or baseline name, "vocab", "n_states", "d_hidden", ...}.
    The caller seeds torch first, so the init is fixed by the run's seed."""
    kind, common = spec["model"], (spec["vocab"], spec["n_states"], spec["d_hidden"])
    if kind == "lstm":
        return LSTMTracker(*common, layers=spec.get("layers", 1))
    if kind == "transformer":
        return TransformerTracker(*common, layers=spec.get("layers", 2))
    if kind == "mamba":
        return MambaTracker(*common, layers=spec.get("layers", 1))
    return StateTracker(*common, kind, rank=spec.get("rank"), block=spec.get("block"),
                        additive=spec.get("additive", False))


def stackable(spec):
    """Whether runs of this spec can train stacked (torch.func.vmap): the bilinear models can, the baselines' fused
    kernels (LSTM) and Python-side control flow (Mamba, attention masks) are trained one run at a time."""
    return spec["model"] not in BASELINES
