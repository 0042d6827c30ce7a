"""The image classifier of Pearce et al. (2025), section 4 and App G.1.

    logits = U g(E x),   g = bilinear layer (W z) * (V z)      (residual variant: U (E x + g(E x)))

Pixels in [0, 1], flattened, no normalization; no biases except where a run asks for them (App L).
The 'reglu' and 'relu' variants replace g at the same hidden width: ReGLU relu(W z) * (V z), and the
elementwise baseline relu(W z).
"""
import torch
from torch import nn

from shared.nn import bilinear_analysis as analysis
from shared.nn.bilinear import Bilinear

LAYERS = ("bilinear", "reglu", "relu")


class ImageClassifier(nn.Module):
    def __init__(self, d_input=784, d_hidden=512, n_classes=10, layer="bilinear", bias=False, residual=False):
        super().__init__()
        if layer not in LAYERS:
            raise ValueError(f"layer must be one of {LAYERS}, got {layer!r}")
        self.layer, self.residual = layer, residual
        self.embed = nn.Linear(d_input, d_hidden, bias=False)
        if layer == "relu":
            self.mixer = nn.Sequential(nn.Linear(d_hidden, d_hidden, bias=bias), nn.ReLU())
        else:
            self.mixer = Bilinear(d_hidden, d_hidden, bias=bias, gate="relu" if layer == "reglu" else None)
        self.head = nn.Linear(d_hidden, n_classes, bias=False)

    @property
    def input_layer(self):
        """The first (bias-free, linear) layer; the trainer fuses it across models that see the same inputs."""
        return self.embed

    def forward_from_input_layer(self, z):
        h = self.mixer(z)
        return self.head(z + h if self.residual else h)

    def forward(self, x):
        return self.forward_from_input_layer(self.embed(x))

    @torch.no_grad()
    def interaction_matrices(self, dtype=torch.float64):
        """Per-class symmetric interaction matrices in embedding space, (classes, d, d).

        With biases, the layer is augmented (z' = [z, 1]) and the matrices are (d+1) x (d+1); the residual
        path's linear term U E x is not part of them (as in the paper's Fig 7 analysis).
        """
        if self.layer != "bilinear":
            raise ValueError("only the bilinear layer has an exact interaction-matrix decomposition")
        left, right = analysis.layer_weights(self.mixer, dtype)
        return analysis.interaction_matrices(left, right, self.head.weight.to(dtype))

    @torch.no_grad()
    def eigen(self, order="magnitude", dtype=torch.float64):
        """Eigenvalues (classes, d) and eigenvectors projected to pixels (classes, d, pixels), bias-free models."""
        vals, vecs = analysis.eigendecompose(self.interaction_matrices(dtype), order=order)
        return vals, analysis.project_to_input(vecs, self.embed.weight.to(dtype))


def build(spec):
    """A model from a run spec (dict from config); the caller seeds torch first so init is fixed by the seed."""
    return ImageClassifier(
        d_input=spec["d_input"], d_hidden=spec["d_hidden"], n_classes=spec["n_classes"],
        layer=spec["layer"], bias=spec["bias"], residual=spec["residual"],
    )
