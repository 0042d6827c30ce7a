"""The two classifiers whose first layer is non-injective (more input than output dimensions).

    MLP:  x (d) -> Linear(d, h1) -> ReLU -> Linear(h1, h2) -> ReLU -> fc Linear(h2, classes)
    CNN:  x (c, s, s) -> Conv(c, c1, k, stride=k) -> ReLU -> Conv(c1, c2, 3, padding=1) -> ReLU -> fc Linear -> classes

The MLP's first layer maps d = 784 (MNIST) to h1 = 256 numbers, so it has a null space of dimension d - rank >= 528:
the harmless perturbations of the paper (section 3). The CNN's first convolution tiles the image with
non-overlapping k x k patches (stride = kernel), each mapped to c1 < c k^2 numbers, so its operator on the image
is non-injective too; its second convolution (stride 1, padding 1) maps to more numbers than it reads and is
injective for a generic kernel, the case where the paper's code falls back to the smallest singular vector.
Both models take flat inputs (N, d), as shared.train.supervised feeds them.
"""
from itertools import pairwise

from torch import nn


class MLP(nn.Module):
    def __init__(self, d_input, hidden, n_classes):
        super().__init__()
        widths = [d_input, *hidden]
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in pairwise(widths))
        self.fc = nn.Linear(widths[-1], n_classes)

    def features(self, x, upto=None):
        """The input of layer `upto` (0: the image, len(layers): the fc's input), from the image x."""
        for layer in self.layers[:upto]:
            x = layer(x).relu()
        return x

    def head(self, h, start):
        """The logits from the input h of layer `start` (the inverse split of `features`)."""
        for layer in self.layers[start:]:
            h = layer(h).relu()
        return self.fc(h)

    def forward(self, x):
        return self.fc(self.features(x))


class CNN(nn.Module):
    def __init__(self, image_shape, channels, kernel, channels2, n_classes):
        super().__init__()
        c, side, _ = image_shape
        self.image_shape = tuple(image_shape)
        self.conv1 = nn.Conv2d(c, channels, kernel, stride=kernel)
        self.conv2 = nn.Conv2d(channels, channels2, 3, padding=1)
        self.side1 = side // kernel
        self.fc = nn.Linear(channels2 * self.side1 ** 2, n_classes)

    def conv1_out_shape(self):
        return (self.conv1.out_channels, self.side1, self.side1)

    def after_conv1(self, h):
        """The logits from conv1's output (before its ReLU)."""
        return self.fc(self.conv2(h.relu()).relu().flatten(1))

    def forward(self, x):
        return self.after_conv1(self.conv1(x.view(-1, *self.image_shape)))


def build(spec):
    """A model from a run spec; the caller seeds torch first so init is fixed by the seed."""
    if spec["kind"] == "mlp":
        return MLP(spec["d_input"], spec["hidden"], spec["n_classes"])
    return CNN(spec["image_shape"], spec["channels"], spec["kernel"], spec["channels2"], spec["n_classes"])
