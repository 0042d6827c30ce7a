"""The models: a bias-free B-cos CNN (the paper's CIFAR-10 design, scaled to the tier) and the standard ReLU CNN of the
same shape that the paper's B-cos networks are compared with.

    B-cos:  x -> [x, 1 - x] -> BcosConv2d x L (MaxOut 2, the last one to the classes) -> global avg pool
              -> / temperature + logit_bias                                   f(x) = W(x) [x, 1 - x] + logit_bias
    ReLU:   x -> (Conv2d + bias, ReLU) x (L - 1) -> Conv2d to the classes -> global avg pool -> + logit_bias

Both are fully convolutional with a global average pool, so a grid of images is classified by the same network (the
localisation metric). `body` maps the encoded input to logits; explanations differentiate it at `encode(x)`.
"""
import torch
from torch import nn

from shared.nn.bcos import BcosConv2d, LogitLayer, add_inverse, logit_bias


class BcosNet(nn.Module):
    def __init__(self, in_channels, channels, kernels, strides, n_classes, b, max_out, temperature):
        super().__init__()
        layers, c = [], 2 * in_channels  # the [x, 1 - x] encoding doubles the channels
        for out, k, s in zip([*channels, n_classes], kernels, strides):
            layers.append(BcosConv2d(c, out, k, stride=s, padding=k // 2, b=b, max_out=max_out))
            c = out
        self.body = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                  LogitLayer(temperature, logit_bias(n_classes)))

    def encode(self, x):
        return add_inverse(x)

    def forward(self, x):
        return self.body(self.encode(x))

    @torch.no_grad()
    def calibrate(self, x):
        """Set each layer's fixed output scale, in order, so that its output has unit RMS on the batch x at init (the
        paper tunes one scale per B by hand; this rule fixes it from the data once, the same for every B)."""
        h = self.encode(x)
        for module in self.body:
            if isinstance(module, BcosConv2d):
                module.set_scale(1.0)
                module.set_scale(module(h).pow(2).mean().sqrt().item())
            h = module(h)


class ReluNet(nn.Module):
    def __init__(self, in_channels, channels, kernels, strides, n_classes):
        super().__init__()
        layers, c = [], in_channels
        for out, k, s in zip([*channels, n_classes], kernels, strides):
            layers += [nn.Conv2d(c, out, k, stride=s, padding=k // 2), nn.ReLU()]
            c = out
        self.body = nn.Sequential(*layers[:-1], nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                  LogitLayer(1.0, logit_bias(n_classes)))

    def encode(self, x):
        return x

    def forward(self, x):
        return self.body(x)

    def calibrate(self, x):
        pass  # torch's default init


def build(spec):
    """One model from a run spec: the config's `model` keys plus in_channels, n_classes, arch ('bcos' or 'relu'), b."""
    shape = {k: spec[k] for k in ("in_channels", "channels", "kernels", "strides", "n_classes")}
    if spec["arch"] == "relu":
        return ReluNet(**shape)
    return BcosNet(**shape, b=spec["b"], max_out=spec["max_out"], temperature=spec["temperature"])
