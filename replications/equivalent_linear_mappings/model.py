"""The quick tier's language model (a SwiGLU + RMSNorm transformer, shared.nn.transformer) and the function the
paper differentiates: input embeddings of a prompt -> the output embedding, i.e. the final RMSNorm's output at the
last position (the LM head's input). `upto=l` stops after block l and applies the final norm there (the paper's
layer-wise maps, 'transform_to_output')."""
from torch import nn

from shared.nn.transformer import Transformer


def build(spec):
    return Transformer(spec["vocab_size"], mlp="swiglu", **spec["model"])


class Readout(nn.Module):
    def __init__(self, lm):
        super().__init__()
        self.lm = lm

    def forward(self, emb, upto=None):
        h = emb
        for i, block in enumerate(self.lm.blocks):
            h = block(h)
            if i == upto:
                break
        return self.lm.norm(h)[:, -1]

    @property
    def unembed(self):
        return self.lm.unembed.weight

    @property
    def n_layer(self):
        return len(self.lm.blocks)
