"""The model of gptq_babai: a ReLU MLP whose nn.Linear layers are quantized after training (the paper quantizes the
linear layers of LLMs; this replication uses the layers of a small MNIST MLP and random layers).

`layer_inputs` returns, for each linear layer, the inputs it sees (its calibration data X) in the float model."""
import torch
from torch import nn


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

    @torch.no_grad()
    def layer_inputs(self, x):
        """[X_1, ..., X_L]: the input of each linear layer on the batch x (float model)."""
        xs = []
        for k, layer in enumerate(self.layers):
            xs.append(x)
            x = layer(x)
            if k < len(self.layers) - 1:
                x = torch.relu(x)
        return xs


def build(spec):
    """A model from a run spec; the caller seeds torch first so init is fixed by the seed."""
    return MLP(spec["d_input"], spec["hidden"], spec["n_classes"])
