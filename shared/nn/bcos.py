"""B-cos layers (Böhle, Fritz, Schiele, CVPR 2022): a linear unit scaled down by how poorly its weight aligns with
its input,

    B-cos(x; w) = (ŵ^T x) |cos(x, ŵ)|^(B-1) / scale,     ŵ = w / ||w||,   cos(x, ŵ) = ŵ^T x / ||x||

B = 1 is a linear unit with unit-norm weights; a larger B suppresses the outputs of weakly aligned inputs. With
MaxOut (the official default, 2 units per output) each output keeps the larger of its linear units before scaling.
The dynamic scale |cos|^(B-1) / scale (and the MaxOut choice) is the layer's input-dependent gate, so a bias-free
network of these layers is f(x) = W(x) x exactly: the layers implement `dynamic_gate` / `dynamic_replay`, and
`shared.nn.dynamic_linear.dynamic_linear_map` reads W(x) off any network built from them. `explanation_mode`
detaches the gate in the forward pass, as the official code does, so that autograd's input gradient is W(x).

Numerics follow the official code (moboehle/B-cos, modules/bcosconv2d.py): ||x|| = sqrt(sum x^2 + 1e-6) over the
layer's input (a conv patch), the B = 2 path is lin |lin| / ||x||, any other B adds 1e-6 to |lin| / ||x|| before the
power, and the default scale is k sqrt(C_in) / 100 (k the kernel size; k = 1 for a linear layer).
"""
import math
from contextlib import contextmanager

import torch
import torch.nn.functional as F
from torch import nn

NORM_EPS = 1e-6  # inside the square root of the input norm
POW_EPS = 1e-6   # added to |cos| before the power when B != 2 (the official code's general-B path)


def add_inverse(x, dim=1):
    """The input encoding [x, 1 - x] along the channel axis: every pixel gets the same channel sum, so brightness no
    longer biases the norm, and colour is encoded by angle (official `AddInverse`)."""
    return torch.cat([x, 1 - x], dim)


class _Bcos(nn.Module):
    """What the linear and convolutional layers share: options, the gate and its replay."""

    def __init__(self, b, max_out, scale, normalize):
        super().__init__()
        self.b, self.max_out, self.normalize, self.explain = float(b), int(max_out), normalize, False
        # a buffer, so that a data-dependent calibration (set_scale) is saved with the weights
        self.register_buffer("scale", torch.tensor(float(scale)))

    def weight_hat(self):
        w = self.weight
        if not self.normalize:
            return w
        return w / w.flatten(1).norm(dim=1).view(-1, *([1] * (w.dim() - 1)))

    def set_scale(self, value):
        self.scale.fill_(float(value))

    def _max_out(self, lin):
        """(N, out * max_out, ...) -> the max over each output's units and its index (None without MaxOut)."""
        if self.max_out == 1:
            return lin, None
        n, _, *rest = lin.shape
        lin, index = lin.view(n, -1, self.max_out, *rest).max(dim=2, keepdim=True)
        return lin.squeeze(2), index

    def _scale_factor(self, lin, norm):
        """|cos|^(B-1) / scale: the dynamic scale of each output."""
        if self.b == 1:
            return torch.ones_like(lin) / self.scale
        if self.b == 2:
            return (lin.abs() / norm) / self.scale
        return (lin.abs() / norm + POW_EPS).pow(self.b - 1) / self.scale

    def forward(self, x):
        lin, _ = self._max_out(self._linear(x))
        factor = self._scale_factor(lin, self._input_norm(x))
        return lin * (factor.detach() if self.explain else factor)

    # the gate protocol of shared.nn.dynamic_linear: one tensor (N, out, max_out, ...) holding the dynamic scale at
    # the selected MaxOut unit and 0 at the others, so the replay is linear in its input
    def dynamic_gate(self, inputs, output):
        lin, index = self._max_out(self._linear(inputs[0]))
        factor = self._scale_factor(lin, self._input_norm(inputs[0])).unsqueeze(2)
        if index is None:
            return factor
        return torch.zeros(*factor.shape[:2], self.max_out, *factor.shape[3:], dtype=factor.dtype,
                           device=factor.device).scatter(2, index, factor)

    def dynamic_replay(self, inputs, gate):
        lin = self._linear(inputs[0])
        n, _, *rest = lin.shape
        return (lin.view(n, -1, self.max_out, *rest) * gate).sum(2)

    def cosines(self, x):
        """|cos(input, ŵ)| of every output's selected unit (for alignment statistics)."""
        lin, _ = self._max_out(self._linear(x))
        return lin.abs() / self._input_norm(x)


class BcosLinear(_Bcos):
    """B-cos on feature vectors (N, in) -> (N, out). No bias: a bias would break f(x) = W(x) x."""

    def __init__(self, in_features, out_features, b=2.0, max_out=2, scale=None, normalize=True):
        scale = math.sqrt(in_features) / 100 if scale is None else scale
        super().__init__(b, max_out, scale, normalize)
        self.in_features, self.out_features = in_features, out_features
        self.weight = nn.Parameter(torch.empty(out_features * max_out, in_features))
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))  # nn.Linear's init

    def _linear(self, x):
        return F.linear(x, self.weight_hat())

    def _input_norm(self, x):
        return (x.pow(2).sum(-1, keepdim=True) + NORM_EPS).sqrt()


class BcosConv2d(_Bcos):
    """B-cos on image patches (N, C_in, H, W) -> (N, C_out, H', W'): the linear layer on every k x k patch."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, b=2.0, max_out=2, scale=None,
                 normalize=True):
        scale = kernel_size * math.sqrt(in_channels) / 100 if scale is None else scale
        super().__init__(b, max_out, scale, normalize)
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.weight = nn.Parameter(torch.empty(out_channels * max_out, in_channels, kernel_size, kernel_size))
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))  # nn.Conv2d's init

    def _linear(self, x):
        return F.conv2d(x, self.weight_hat(), stride=self.stride, padding=self.padding)

    def _input_norm(self, x):
        k = self.kernel_size
        # the sum of squares over each patch (channels and window), zero padding counted as the conv sees it
        squares = F.avg_pool2d(x.pow(2).sum(1, keepdim=True), k, self.stride, self.padding) * k * k
        return (squares + NORM_EPS).sqrt()


def bcos_layers(model):
    return [m for m in model.modules() if isinstance(m, _Bcos)]


@contextmanager
def explanation_mode(model):
    """Detach every B-cos layer's dynamic scale inside the block: the input gradient of an output is then its row of
    W(x) (the official `explanation_mode(detach=True)`)."""
    layers = bcos_layers(model)
    for layer in layers:
        layer.explain = True
    try:
        yield model
    finally:
        for layer in layers:
            layer.explain = False


class LogitLayer(nn.Module):
    """logits = pooled / temperature + logit_bias, the bias fixed (official `FinalLayer`): a constant b(x)."""

    def __init__(self, temperature, logit_bias):
        super().__init__()
        self.temperature, self.logit_bias = float(temperature), float(logit_bias)

    def forward(self, x):
        return x / self.temperature + self.logit_bias


def logit_bias(n_classes):
    """The official fixed bias log(p / (1 - p)) with p = 1 / classes: every sigmoid starts at chance."""
    p = 1 / n_classes
    return math.log(p / (1 - p))
