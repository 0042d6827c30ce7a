"""The benchmark's models: one per task kind, each with the layer family's MLP block (shared.nn.layer_registry's
`block` form, d -> h -> d) as the only part that differs between families.

    image / regression   logits = head(block(x))                   x: flattened pixels or teacher inputs, d fixed
    language model       a one-layer transformer of shared.nn.transformer whose MLP is the block

The dense head (and, for the LM, embedding, attention and unembedding) is the same for every family at a task, so a
budget matched on the block is a budget matched on the whole model up to that constant part.
"""
from torch import nn

from shared.nn.layer_registry import make
from shared.nn.transformer import Transformer


class BlockNet(nn.Module):
    def __init__(self, family, d, h, d_out, hyper):
        super().__init__()
        self.block = make(family, d, h, "block", **hyper)
        self.head = nn.Linear(d, d_out)

    def forward(self, x):
        return self.head(self.block(x))


def language_model(family, d, h, hyper, vocab, n_head, n_ctx):
    """A one-layer transformer (Pearce et al.'s block: weightless RMSNorm, rotary attention) with the family's block
    as its MLP. The rest keeps Transformer's GPT-2 init; the block keeps the registry's."""
    model = Transformer(vocab, d_model=d, d_hidden=h, n_head=n_head, n_layer=1, n_ctx=n_ctx)
    for block in model.blocks:
        block.mlp = make(family, d, h, "block", **hyper)
    return model


def block_of(model):
    """The family's block inside a model of `build`."""
    return model.blocks[0].mlp if isinstance(model, Transformer) else model.block


def build(spec):
    """A model from a run spec of common.plan (task kind, family, d, width, ...); the caller seeds torch first."""
    if spec["kind"] == "lm":
        return language_model(spec["family"], spec["d"], spec["width"], spec["hyper"], spec["vocab"],
                              spec["n_head"], spec["n_ctx"])
    return BlockNet(spec["family"], spec["d"], spec["width"], spec["d_out"], spec["hyper"])
