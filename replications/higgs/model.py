"""The models whose linear layers are quantized: a SwiGLU + RMSNorm transformer trained on the synthetic stories
(shared.nn.transformer; the stand-in for the paper's LLMs) and a ReLU MLP trained on MNIST-5k.

`quantized_layers(model)` lists the nn.Linear layers the experiments perturb and quantize: every Linear inside the
transformer's blocks (attention qkv and out, the SwiGLU's joint gate/up projection and down), the token embedding
and LM head kept in float (as the paper's setups do); every layer of the MLP."""
import torch
from torch import nn

from shared.nn.transformer import Transformer


class MLP(nn.Module):
    def __init__(self, d_input, hidden, n_classes):
        super().__init__()
        sizes = [d_input, *hidden, n_classes]
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))

    def forward(self, x):
        for k, layer in enumerate(self.layers):
            x = layer(x)
            if k < len(self.layers) - 1:
                x = torch.relu(x)
        return x


def build(spec):
    """A model from a run spec ({"kind": "lm", "vocab_size", "model": {...}} or {"kind": "mlp", "d_input",
    "hidden", "n_classes"}); the caller seeds torch first."""
    if spec["kind"] == "lm":
        return Transformer(spec["vocab_size"], mlp="swiglu", **spec["model"])
    return MLP(spec["d_input"], spec["hidden"], spec["n_classes"])


def quantized_layers(model):
    """[(name, nn.Linear)] of the layers that are quantized, in forward order."""
    if isinstance(model, Transformer):
        return [(f"b{i}.{n}", m) for i, block in enumerate(model.blocks) for n, m in block.named_modules()
                if isinstance(m, nn.Linear)]
    return [(f"fc{k + 1}", m) for k, m in enumerate(model.layers)]
