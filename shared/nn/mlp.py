"""A plain ReLU MLP: nn.Linear layers with a ReLU between consecutive ones and none after the last, the float model
whose linear layers the quantization papers (gptq_babai, higgs) round. `layer_inputs` gives what each layer reads
on a batch, the calibration data X of GPTQ."""
import torch
from torch import nn


class ReluMLP(nn.Module):
    def __init__(self, d_input, hidden, n_classes):
        super().__init__()
        sizes = [d_input, *hidden, n_classes]
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))

    def forward(self, x):
        return self._run(x)

    @torch.no_grad()
    def layer_inputs(self, x):
        """[X_1, ..., X_L]: the input of each linear layer on the batch x."""
        xs = []
        self._run(x, xs)
        return xs

    def _run(self, x, inputs=None):
        for k, layer in enumerate(self.layers):
            if inputs is not None:
                inputs.append(x)
            x = layer(x)
            if k < len(self.layers) - 1:
                x = torch.relu(x)
        return x
