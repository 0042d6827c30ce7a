"""TopK sparse autoencoder (Gao et al. 2024) as Pearce et al. (2025) App G.3 train it:

    z = relu(TopK_k(W_enc (x - b_dec)))      x_hat = W_dec z + b_dec

with unit-norm decoder columns (the gradient along each column is projected out before a step, and the columns
are renormalized after it), the encoder initialised to the decoder's transpose, and no encoder bias. Without an
encoder bias, a latent's pre-activation is a linear function of x - b_dec, which is what lets the paper read an
output latent through the bilinear weights: on tokens where it is active, z_f = e_f . (x - b_dec) exactly.
"""
import torch
from torch import nn


class TopKSAE(nn.Module):
    def __init__(self, d_model, n_features, k):
        super().__init__()
        if not 0 < k <= n_features:
            raise ValueError(f"k must be in 1..{n_features}, got {k}")
        self.k = k
        decoder = torch.randn(d_model, n_features)
        self.decoder = nn.Parameter(decoder / decoder.norm(dim=0, keepdim=True))  # (d, m): columns = features
        self.encoder = nn.Parameter(self.decoder.detach().T.clone())  # (m, d): rows read the features
        self.b_dec = nn.Parameter(torch.zeros(d_model))

    def pre_activations(self, x):
        return (x - self.b_dec) @ self.encoder.T

    def encode(self, x):
        pre = self.pre_activations(x)
        top = pre.topk(self.k, dim=-1)
        return torch.zeros_like(pre).scatter(-1, top.indices, top.values.relu())

    def decode(self, z):
        return z @ self.decoder.T + self.b_dec

    def forward(self, x):
        return self.decode(self.encode(x))

    @torch.no_grad()
    def normalize_decoder(self):
        self.decoder /= self.decoder.norm(dim=0, keepdim=True)

    @torch.no_grad()
    def project_decoder_grad(self):
        """Remove the part of each column's gradient along the column: the step then keeps the norm (to first order)."""
        d, g = self.decoder, self.decoder.grad
        g -= d * (d * g).sum(0, keepdim=True)


def normalized_mse(x, x_hat):
    """||x - x_hat||^2 / ||x - mean(x)||^2 over a batch: 0 is perfect, 1 is no better than the mean."""
    return ((x - x_hat).pow(2).sum() / (x - x.mean(0)).pow(2).sum()).item()
