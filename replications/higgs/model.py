"""The models whose linear layers are quantized: a SwiGLU + RMSNorm transformer trained on the synthetic stories
(shared.nn.transformer; the stand-in for the paper's LLMs) and a ReLU MLP trained on MNIST-5k.

`quantized_layers(model)` lists the nn.Linear layers the experiments perturb and quantize: every Linear inside the
transformer's blocks (attention qkv and out, the SwiGLU's joint gate/up projection and down), the token embedding
and LM head kept in float (as the paper's setups do); every layer of the MLP."""
from torch import nn

from shared.nn.mlp import ReluMLP
from shared.nn.transformer import Transformer


def build(spec):
    """A model from a run spec ({"kind": "lm", "vocab_size", "model": {...}} or {"kind": "mlp", "d_input",
    "hidden", "n_classes"}); the caller seeds torch first."""
    if spec["kind"] == "lm":
        return Transformer(spec["vocab_size"], mlp="swiglu", **spec["model"])
    return ReluMLP(spec["d_input"], spec["hidden"], spec["n_classes"])


def quantized_layers(model):
    """[(name, nn.Linear)] of the layers that are quantized, in forward order."""
    if isinstance(model, Transformer):
        return [(f"b{i}.{n}", m) for i, block in enumerate(model.blocks) for n, m in block.named_modules()
                if isinstance(m, nn.Linear)]
    return [(f"fc{k + 1}", m) for k, m in enumerate(model.layers)]
