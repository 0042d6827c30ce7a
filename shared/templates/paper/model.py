"""The model of __PAPER__: a small bilinear classifier (replace it with the paper's model).

    logits = U g(E x),   g = bilinear layer (W z + b1) * (V z + b2)      (shared.nn.bilinear.Bilinear)

Because g is bilinear, the logits are an exact quadratic form of z = E x: logit_c = z'^T B[c] z' with
B[c] = sum_h U[c, h] W[h] (x) V[h] and z' = [z, 1] when the layer has biases. `tensor` returns B, so the
analysis can check that identity on the trained weights.
"""
import torch
from torch import nn

from shared.nn import bilinear_analysis as analysis
from shared.nn.bilinear import Bilinear


class BilinearClassifier(nn.Module):
    def __init__(self, d_input, d_hidden, n_classes, bias=False):
        super().__init__()
        self.embed = nn.Linear(d_input, d_hidden, bias=False)
        self.mixer = Bilinear(d_hidden, d_hidden, bias=bias)
        self.head = nn.Linear(d_hidden, n_classes, bias=False)

    def forward(self, x):
        return self.head(self.mixer(self.embed(x)))

    @torch.no_grad()
    def tensor(self, dtype=torch.float64):
        """B of the bilinear layer with the head folded in: (classes, d, d), or (classes, d+1, d+1) with biases."""
        left, right = analysis.layer_weights(self.mixer, dtype)
        return analysis.bilinear_tensor(left, right, self.head.weight.to(dtype))

    @torch.no_grad()
    def layer_input(self, x):
        """z = E x, with the constant coordinate appended when the layer has biases (the input B contracts with)."""
        z = self.embed(x.to(self.embed.weight.dtype))
        return z if self.mixer.left_bias is None else analysis.append_one(z)


def build(spec):
    """A model from a run spec (dict from config.yaml); the caller seeds torch first so init is fixed by the seed."""
    return BilinearClassifier(d_input=spec["d_input"], d_hidden=spec["d_hidden"], n_classes=spec["n_classes"],
                              bias=spec["bias"])
