"""The models of linearscope: a ReLU + max-pool CNN classifier (the paper's classification setting, scaled down)
and a bilinear MLP (this suite's extension: a network with no gates at all).

    cnn:      [conv3x3 -> ReLU -> maxpool2] per entry of `channels` -> flatten -> linear -> logits
    bilinear: logits = U ((L x) * (R x))        (shared.nn.bilinear.Bilinear, no biases)
    sr:       x2 super-resolution, [conv3x3 -> ReLU] * layers -> conv3x3 to 4 C channels -> pixel shuffle

Both take flat images (N, C*H*W) in channel-first order, so the supervised trainer and the frozen-gate map
(shared.nn.dynamic_linear) see one input vector per image.
"""
from torch import nn

from shared.nn.bilinear import Bilinear


class ScopeCNN(nn.Module):
    def __init__(self, in_channels, size, channels, n_classes, bias=True):
        super().__init__()
        self.in_channels, self.size = in_channels, size
        layers, c = [], in_channels
        for width in channels:
            layers += [nn.Conv2d(c, width, 3, padding=1, bias=bias), nn.ReLU(), nn.MaxPool2d(2)]
            c, size = width, size // 2
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(c * size * size, n_classes, bias=bias)

    def forward(self, x):
        z = self.features(x.view(-1, self.in_channels, self.size, self.size))
        return self.head(z.flatten(1))


class BilinearNet(nn.Module):
    def __init__(self, d_input, d_hidden, n_classes):
        super().__init__()
        self.bilinear = Bilinear(d_input, d_hidden, bias=False)
        self.head = nn.Linear(d_hidden, n_classes, bias=False)

    def forward(self, x):
        return self.head(self.bilinear(x))


class SRNet(nn.Module):
    """A tiny x2 super-resolution CNN (the paper's SR setting, scaled down): low-res (N, C*h*h) -> (N, C*2h*2h)."""

    def __init__(self, in_channels, size, width, layers):
        super().__init__()
        self.in_channels, self.size = in_channels, size // 2  # `size` is the high-resolution side
        convs, c = [], in_channels
        for _ in range(layers):
            convs += [nn.Conv2d(c, width, 3, padding=1), nn.ReLU()]
            c = width
        self.body = nn.Sequential(*convs, nn.Conv2d(c, 4 * in_channels, 3, padding=1), nn.PixelShuffle(2))

    def forward(self, x):
        return self.body(x.view(-1, self.in_channels, self.size, self.size)).flatten(1)


def build(spec):
    """A model from a run spec (config `models` entry plus image shape and classes); the caller seeds torch first."""
    if spec["arch"] == "cnn":
        return ScopeCNN(spec["in_channels"], spec["size"], spec["channels"], spec["n_classes"], spec["bias"])
    if spec["arch"] == "bilinear":
        return BilinearNet(spec["in_channels"] * spec["size"] ** 2, spec["d_hidden"], spec["n_classes"])
    if spec["arch"] == "sr":
        return SRNet(spec["in_channels"], spec["size"], spec["width"], spec["layers"])
    raise ValueError(f"unknown arch {spec['arch']!r}")
