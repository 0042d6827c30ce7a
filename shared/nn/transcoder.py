"""Transcoder (Dunefsky, Chlenski, Nanda 2024): a wide, sparsely activating MLP trained to imitate a dense MLP layer,

    z = act(W_enc (x - b_dec_in) + b_enc)        y_hat = W_dec^T z + b_dec_out

with x the MLP's input and y its output (d_in -> d_out, generally different spaces, hence two separate biases: the
input-centring b_dec_in and the output bias b_dec_out). act is ReLU (the paper's, trained with an L1 penalty) or
TopK (keep the k largest pre-activations, then ReLU; trained on reconstruction alone). Feature i reads with its
encoder row f_enc,i = W_enc[i] (d_in) and writes its decoder row f_dec,i = W_dec[i] (d_out), kept at unit norm (the
gradient along each row is projected out before a step, the rows renormalized after it), as in the official code.

The reconstruction loss is the official code's (the early SAELens loss it was adapted from): the squared error of
each coordinate divided by the Euclidean norm (not its square) of the batch-centred target, averaged over the batch
and the coordinates,

    mse = mean_{b, k} (y_hat[b, k] - y[b, k])^2 / ||y[b] - mean_b' y[b']||_2

plus, for ReLU, l1 * mean_b sum_i |z[b, i]|. An SAE is the special case d_in = d_out with the target equal to the
input (`sae=True` ties b_dec_out to b_dec_in, as an SAE has one decoder bias).

The TopK transcoder registers itself in shared.nn.layer_registry as family `transcoder_topk`: a d_in -> d_out layer
(and a d -> h -> d block with h features).
"""
import torch
from torch import nn

ACTIVATIONS = ("relu", "topk")


class Transcoder(nn.Module):
    def __init__(self, d_in, d_out, n_features, activation="relu", k=None, sae=False):
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {ACTIVATIONS}, got {activation!r}")
        if activation == "topk" and not (k is not None and 0 < k <= n_features):
            raise ValueError(f"topk needs k in 1..{n_features}, got {k}")
        if sae and d_in != d_out:
            raise ValueError(f"an SAE maps a space to itself: d_in {d_in} != d_out {d_out}")
        self.d_in, self.d_out, self.n_features = d_in, d_out, n_features
        self.activation, self.k, self.sae = activation, k, sae
        decoder = torch.randn(n_features, d_out)
        self.W_dec = nn.Parameter(decoder / decoder.norm(dim=1, keepdim=True))  # (m, d_out): rows = f_dec,i
        encoder = torch.randn(n_features, d_in)
        self.W_enc = nn.Parameter(encoder / encoder.norm(dim=1, keepdim=True))  # (m, d_in): rows = f_enc,i
        self.b_enc = nn.Parameter(torch.zeros(n_features))
        self.b_dec_in = nn.Parameter(torch.zeros(d_in))
        self.b_dec_out = None if sae else nn.Parameter(torch.zeros(d_out))

    @property
    def output_bias(self):
        return self.b_dec_in if self.sae else self.b_dec_out

    def pre_activations(self, x):
        return (x - self.b_dec_in) @ self.W_enc.T + self.b_enc

    def activate(self, pre):
        if self.activation == "relu":
            return pre.relu()
        top = pre.topk(self.k, dim=-1)
        return torch.zeros_like(pre).scatter(-1, top.indices, top.values.relu())

    def encode(self, x):
        return self.activate(self.pre_activations(x))

    def decode(self, z):
        return z @ self.W_dec + self.output_bias

    def forward(self, x):
        return self.decode(self.encode(x))

    def loss(self, x, y, l1=0.0):
        """(total, mse, sparsity term) of one batch: transcoder_mse, plus l1 * mean L1 of z for ReLU (TopK: 0)."""
        z = self.encode(x)
        mse = transcoder_mse(self.decode(z), y)
        sparsity = l1 * z.abs().sum(-1).mean() if self.activation == "relu" else torch.zeros((), device=x.device)
        return mse + sparsity, mse, sparsity

    @torch.no_grad()
    def normalize_decoder(self):
        self.W_dec /= self.W_dec.norm(dim=1, keepdim=True)

    @torch.no_grad()
    def project_decoder_grad(self):
        """Remove the part of each row's gradient along the row: the step keeps its norm to first order."""
        d, g = self.W_dec, self.W_dec.grad
        if g is not None:
            g -= d * (d * g).sum(1, keepdim=True)


def transcoder_mse(y_hat, y):
    """The official code's normalised squared error: mean over batch and coordinates of (y_hat - y)^2 divided by the
    norm of the batch-centred target row (a batch of one has no centring to do: its own norm then)."""
    centred = y - y.mean(0, keepdim=True) if len(y) > 1 else y
    return ((y_hat - y).pow(2) / centred.norm(dim=-1, keepdim=True)).mean()


def fraction_of_variance_unexplained(y_hat, y):
    """||y - y_hat||^2 / ||y - mean(y)||^2 over a batch (0 perfect, 1 no better than the mean)."""
    return ((y - y_hat).pow(2).sum() / (y - y.mean(0)).pow(2).sum()).item()


@torch.no_grad()
def sparsity_stats(transcoder, x, batch_size=4096):
    """{'l0': mean number of active features per row, 'dead_fraction': features never active on x,
    'activity': (m,) fraction of rows each feature is active on}."""
    counts, active, n = torch.zeros(transcoder.n_features, device=x.device), 0.0, 0
    for i in range(0, len(x), batch_size):
        on = transcoder.encode(x[i:i + batch_size]) > 0
        counts += on.sum(0)
        active += on.sum().item()
        n += len(on)
    activity = counts / max(n, 1)
    return {"l0": active / max(n, 1), "dead_fraction": (counts == 0).float().mean().item(), "activity": activity}


def topk_params(d_in, d_out, features, k):
    return features * (d_in + d_out + 1) + d_in + d_out


def topk_macs(d_in, d_out, features, k):
    return features * (d_in + d_out)


def register_family(name="transcoder_topk"):
    """Register a TopK transcoder with shared.nn.layer_registry: layer d_in -> d_out with `features` features (k of
    them active), block d -> h -> d with h features. Its protocol fits (a sparse ReLU MLP d_in -> d_out, with
    exact parameter and multiply-add counts)."""
    from shared.nn.layer_registry import register

    return register(
        name, layer=lambda d_in, d_out, features, k: Transcoder(d_in, d_out, features, "topk", k),
        params=topk_params, macs=topk_macs,
        block=lambda d, h, features, k: Transcoder(d, d, h, "topk", min(k, h)),
        block_params=lambda d, h, features, k: topk_params(d, d, h, k),
        block_macs=lambda d, h, features, k: topk_macs(d, d, h, k),
        hyper={"features": 64, "k": 8}, nonlinear=True,
        cite="Dunefsky, Chlenski, Nanda 2024 (transcoder, TopK variant)")


register_family()
