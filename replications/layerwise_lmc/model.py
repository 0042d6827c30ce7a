"""The models of layerwise_lmc, in plain torch.

  * MLP: 784 - h - ... - h - 10 with `depth` hidden layers `hidden.<i>` (nn.Linear + ReLU) and the head `out`;
    with kind "bilinear" each hidden layer is shared.nn.bilinear.Bilinear (its one `proj` holds both halves, so
    layer_groups counts `hidden.<i>.proj` as one layer) -- this suite's extension, not in the paper.
  * ResNet18NoNorm: torchvision's resnet18 with norm_layer = identity (so no normalisation layers at all), a 3x3
    stride-1 stem and no max-pool, for 32x32 CIFAR-10 (dossier section 3; the official code builds
    `resnet18(norm_layer=nn.Identity)` with that stem). Convolutions have no bias, as in torchvision; the init is
    torchvision's (Kaiming normal, fan_out, for the convolutions; PyTorch's default for the head).
"""
from itertools import pairwise

from torch import nn
from torch.nn import functional as F

from shared.nn.bilinear import Bilinear


class MLP(nn.Module):
    def __init__(self, d_input, width, depth, n_classes, kind="relu"):
        super().__init__()
        self.kind = kind
        dims = [d_input] + [width] * depth
        if kind == "relu":
            self.hidden = nn.ModuleList(nn.Linear(i, o) for i, o in pairwise(dims))
        elif kind == "bilinear":
            self.hidden = nn.ModuleList(Bilinear(i, o, bias=True) for i, o in pairwise(dims))
        else:
            raise ValueError(f"kind must be relu or bilinear, got {kind!r}")
        self.out = nn.Linear(dims[-1], n_classes)

    def forward(self, x):
        x = x.flatten(1)
        for layer in self.hidden:
            x = F.relu(layer(x)) if self.kind == "relu" else layer(x)
        return self.out(x)


class BasicBlock(nn.Module):
    """torchvision's BasicBlock with both norms replaced by the identity."""

    def __init__(self, inp, out, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(inp, out, 3, stride, 1, bias=False)
        self.conv2 = nn.Conv2d(out, out, 3, 1, 1, bias=False)
        self.downsample = None
        if stride != 1 or inp != out:
            self.downsample = nn.Sequential(nn.Conv2d(inp, out, 1, stride, bias=False))

    def forward(self, x):
        y = self.conv2(F.relu(self.conv1(x)))
        return F.relu(y + (x if self.downsample is None else self.downsample(x)))


class ResNet18NoNorm(nn.Module):
    def __init__(self, n_classes=10, width=64):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 3, 1, 1, bias=False)
        stages, inp = [], width
        for i, (mult, stride) in enumerate(((1, 1), (2, 2), (4, 2), (8, 2))):
            out = width * mult
            stages.append(nn.Sequential(BasicBlock(inp, out, stride), BasicBlock(out, out, 1)))
            inp = out
        self.layer1, self.layer2, self.layer3, self.layer4 = stages
        self.fc = nn.Linear(inp, n_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


def build(spec):
    """A model from a run spec; the caller seeds torch first, so the init depends on the spec's init seed only."""
    if spec["model"] == "resnet18_nonorm":
        return ResNet18NoNorm(spec["n_classes"])
    return MLP(spec["d_input"], spec["width"], spec["depth"], spec["n_classes"],
               kind="bilinear" if spec["model"] == "bilinear" else "relu")
