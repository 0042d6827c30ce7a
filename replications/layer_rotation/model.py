"""The paper's MLPs, as its Keras code builds them: Dense (Glorot-uniform kernel, zero bias) -> BatchNorm
(Keras' momentum 0.99 and epsilon 1e-3) -> ReLU per hidden layer, then a Dense output (softmax in the loss).

    784-256-256-256-256-10 (the dossier's quick-tier net, 5 kernels) | 784-784-10 (section 6's MNIST MLP)
"""
from torch import nn


def build(spec):
    """An MLP from a run spec (d_input, hidden, n_classes); the caller seeds torch first."""
    layers, width = [], spec["d_input"]
    for h in spec["hidden"]:
        layers += [nn.Linear(width, h), nn.BatchNorm1d(h, eps=1e-3, momentum=0.01), nn.ReLU()]
        width = h
    layers.append(nn.Linear(width, spec["n_classes"]))
    model = nn.Sequential(*layers)
    for m in model:
        if isinstance(m, nn.Linear):
            nn.init.xavier_uniform_(m.weight)
            nn.init.zeros_(m.bias)
    return model
