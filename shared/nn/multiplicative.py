"""Two-layer networks on pairs of group elements whose hidden layer multiplies, with many members trained as one.

A pair (a, b) enters as the concatenated one-hots [e_a; e_b] (a frozen identity embedding), so the first layer is
two tables: u_k(a) = left[a, k] and v_k(b) = right[b, k]. Unit k computes
    quadratic:  (u_k(a) + v_k(b))^2 = u_k(a)^2 + 2 u_k(a) v_k(b) + v_k(b)^2   (Li2's sigma(x) = x^2)
    bilinear:   u_k(a) v_k(b)                                               (the suite's bilinear layer, Bilinear
                                                                               with one half reading a, one reading b)
    relu, relu2, silu:  sigma(u_k(a) + v_k(b))
and the logits are sum_k h_k out[k, c]. No biases, as in both papers. The bilinear network computes the CP tensor
T[a, b, c] = sum_k u_k(a) v_k(b) out[k, c], so its width bounds the CP rank it can represent; a quadratic unit adds
terms that depend on a alone or b alone.

Every parameter has a leading `members` axis: member i is the network seeded with seeds[i], exactly as if built
alone, so a seed or training-fraction sweep is one set of tensors (no vmap needed: the forward is gathers and one
batched matmul).
"""
import math

import torch
from torch import nn

ACTIVATIONS = {
    "quadratic": lambda x: x * x,
    "relu": torch.relu,
    "relu2": lambda x: torch.relu(x) ** 2,
    "silu": nn.functional.silu,
}


class GroupPairNet(nn.Module):
    """left, right: (members, n_in, width); out: (members, width, n_out). Init as torch's nn.Linear default for
    the layers [e_a; e_b] -> width (fan-in 2 n_in) and width -> n_out (fan-in width), times `init_scale`."""

    def __init__(self, n_in, width, n_out=None, activation="quadratic", seeds=(0,), init_scale=1.0):
        super().__init__()
        if activation not in (*ACTIVATIONS, "bilinear"):
            raise ValueError(f"activation {activation!r}: choose from {sorted((*ACTIVATIONS, 'bilinear'))}")
        n_out = n_in if n_out is None else n_out
        self.activation, self.seeds = activation, tuple(int(s) for s in seeds)
        left, right, out = [], [], []
        first, second = init_scale / math.sqrt(2 * n_in), init_scale / math.sqrt(width)
        for seed in self.seeds:
            g = torch.Generator().manual_seed(seed)
            left.append((torch.rand(n_in, width, generator=g) * 2 - 1) * first)
            right.append((torch.rand(n_in, width, generator=g) * 2 - 1) * first)
            out.append((torch.rand(width, n_out, generator=g) * 2 - 1) * second)
        self.left, self.right, self.out = (nn.Parameter(torch.stack(t)) for t in (left, right, out))

    @property
    def members(self):
        return self.left.shape[0]

    def hidden(self, a, b):
        """(members, n, width) hidden activations; a, b: (n,) shared by all members or (members, n)."""
        rows = torch.arange(self.members, device=self.left.device)[:, None]
        if a.dim() == 1:  # one-hot matmuls: on a CPU, 2-3x faster forward + backward than gathers
            n_in = self.left.shape[1]
            u = nn.functional.one_hot(a, n_in).to(self.left.dtype) @ self.left
            v = nn.functional.one_hot(b, n_in).to(self.right.dtype) @ self.right
        else:
            u, v = self.left[rows, a], self.right[rows, b]
        if self.activation == "bilinear":
            return u * v
        return ACTIVATIONS[self.activation](u + v)

    def forward(self, a, b):
        return torch.bmm(self.hidden(a, b), self.out)

    def member_state(self, i):
        """Member i's weights as plain (n_in, width), (n_in, width), (width, n_out) tensors."""
        return {"left": self.left[i].detach(), "right": self.right[i].detach(), "out": self.out[i].detach()}


def centred_targets(labels, n_classes):
    """Li2's MSE target: one-hot minus 1/n_classes (its sum over classes is zero)."""
    return nn.functional.one_hot(labels, n_classes).to(torch.get_default_dtype()) - 1.0 / n_classes


def centred_mse(logits, labels):
    """Per-example ||P_perp logits - (onehot - 1/C)||^2, with P_perp removing the mean over classes (Li2's loss)."""
    centred = logits - logits.mean(-1, keepdim=True)
    return (centred - centred_targets(labels, logits.shape[-1]).to(logits.dtype)).pow(2).sum(-1)


def plain_mse(logits, labels):
    """Per-example ||logits - onehot||^2, uncentred: unlike centred_mse, the network must also fit the one-hot's
    mean over classes (the trivial triple of a group's word tensor)."""
    return (logits - nn.functional.one_hot(labels, logits.shape[-1]).to(logits.dtype)).pow(2).sum(-1)


def cross_entropy(logits, labels):
    """Per-example cross-entropy; logits (..., n, C), labels (n,) or (..., n)."""
    labels = labels.expand(logits.shape[:-1])
    return nn.functional.cross_entropy(logits.flatten(0, -2), labels.reshape(-1), reduction="none").view(labels.shape)


LOSSES = {"mse": centred_mse, "plain_mse": plain_mse, "ce": cross_entropy}
