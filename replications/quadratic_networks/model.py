"""The networks of quadratic_networks, each built from conventional or quadratic neurons (shared.nn.quadratic_neuron).

  * Net: d -> h (ReLU) -> ... -> out, every neuron of one kind, the last layer without activation; hidden=[] is a
    single neuron (the XOR / disk classifier of the paper's introduction).
  * ResNet20: the CIFAR ResNet of He et al. (3 stages of 3 basic blocks, 16/32/64 channels, option-A shortcuts:
    strided subsampling and zero channel padding, BatchNorm, ReLU after BN), as the official ReLinear code, with
    every 3x3 convolution quadratic in the quadratic network (the first conv and the linear head included).

Initialisations (`init`): "default" keeps torch's; "kaiming" is the official code's _weights_init (Kaiming-normal
weights of every conv and linear map, here with zero biases), which for a quadratic network is the "random"
initialisation (W_g, W_b Kaiming, b_g = c = 0); "relinear" is "kaiming" then ReLinear's W_g = 0, b_g = 1, W_b = 0,
c = 0, so the network equals the conventional one with the same W_r.
"""
from itertools import pairwise

import torch
import torch.nn.functional as F
from torch import nn

from shared.nn.quadratic_neuron import QuadraticConv2d, QuadraticLinear, relinear_init


def linear(neuron, d_in, d_out):
    return QuadraticLinear(d_in, d_out) if neuron == "quadratic" else nn.Linear(d_in, d_out)


def conv3x3(neuron, c_in, c_out, stride=1):
    if neuron == "quadratic":
        return QuadraticConv2d(c_in, c_out, 3, stride, 1, bias=True)
    return nn.Conv2d(c_in, c_out, 3, stride, 1, bias=True)


class Net(nn.Module):
    def __init__(self, d_in, hidden, d_out, neuron):
        super().__init__()
        sizes = [d_in, *hidden, d_out]
        self.layers = nn.ModuleList(linear(neuron, a, b) for a, b in pairwise(sizes))

    def forward(self, x):
        for layer in self.layers[:-1]:
            x = F.relu(layer(x))
        return self.layers[-1](x)


class Block(nn.Module):
    def __init__(self, neuron, c_in, c_out, stride):
        super().__init__()
        self.conv1, self.bn1 = conv3x3(neuron, c_in, c_out, stride), nn.BatchNorm2d(c_out)
        self.conv2, self.bn2 = conv3x3(neuron, c_out, c_out), nn.BatchNorm2d(c_out)
        self.pad = c_out - c_in  # option A: subsample by the stride, pad the new channels with zeros
        self.stride = stride

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        short = x[:, :, ::self.stride, ::self.stride] if self.stride > 1 else x
        if self.pad:
            short = F.pad(short, (0, 0, 0, 0, self.pad // 2, self.pad - self.pad // 2))
        return F.relu(out + short)


class ResNet20(nn.Module):
    def __init__(self, neuron, n_classes=10, blocks=3):
        super().__init__()
        self.conv, self.bn = conv3x3(neuron, 3, 16), nn.BatchNorm2d(16)
        layers, c_in = [], 16
        for c_out, stride in ((16, 1), (32, 2), (64, 2)):
            for i in range(blocks):
                layers.append(Block(neuron, c_in, c_out, stride if i == 0 else 1))
                c_in = c_out
        self.blocks = nn.Sequential(*layers)
        self.head = linear(neuron, 64, n_classes)

    def forward(self, x):
        x = F.relu(self.bn(self.conv(x)))
        x = self.blocks(x)
        return self.head(x.mean((2, 3)))


@torch.no_grad()
def initialise(model, init):
    if init == "default":
        return model
    for m in model.modules():
        if isinstance(m, (nn.Linear, nn.Conv2d)):
            nn.init.kaiming_normal_(m.weight)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
    return relinear_init(model) if init == "relinear" else model


def neurons(model):
    """The model's linear maps (conventional) or quadratic layers, in construction order."""
    kinds = (nn.Linear, nn.Conv2d, QuadraticLinear, QuadraticConv2d)
    found = [m for m in model.modules() if isinstance(m, kinds)]
    return [m for m in found if not any(m in set(q.children()) for q in found)]  # r, g, b inside a quadratic layer


@torch.no_grad()
def reference(quadratic, conventional):
    """Copy each conventional map into the matching quadratic layer's W_r, b_r (and the BatchNorms across): at
    ReLinear's init the quadratic network is then the conventional one, not merely a linear network."""
    for q, c in zip(neurons(quadratic), neurons(conventional), strict=True):
        q.r.load_state_dict(c.state_dict())
    norms = [[m for m in net.modules() if isinstance(m, nn.BatchNorm2d)] for net in (quadratic, conventional)]
    for q, c in zip(*norms, strict=True):
        q.load_state_dict(c.state_dict())
    return quadratic


def architecture(spec, neuron):
    if spec["arch"] == "resnet20":
        return ResNet20(neuron, spec["n_classes"])
    return Net(spec["d_in"], spec["hidden"], spec["d_out"], neuron)


def build(spec):
    """A model from a run spec; the caller seeds torch first. A ReLinear network is referenced to the conventional
    network this seed builds (the same draws), so its W_r is that network's W."""
    if spec["init"] == "relinear":
        conventional = initialise(architecture(spec, "conventional"), "kaiming")
        return reference(initialise(architecture(spec, "quadratic"), "relinear"), conventional)
    return initialise(architecture(spec, spec["neuron"]), spec["init"])
