"""The models of git_re_basin: the paper's MLP (784-h-h-h-10, ReLU; dossier section 3) and, for the extension, the
same MLP with bilinear hidden layers (shared.nn.bilinear.Bilinear).

Layer names are what the permutation specs (shared.nn.permutation) and the activation hooks refer to:
  MLP:          fc.0 ... fc.L (nn.Linear), act.0 ... act.{L-1} (nn.ReLU, one module per hidden layer, so a forward
                hook on act.i sees the post-ReLU activations that activation matching compares)
  BilinearMLP:  hidden.0 ... hidden.{L-1} (Bilinear, no bias), out (nn.Linear)
Hidden layer i's units are permutation P{i} in both.
"""
from torch import nn

from shared.nn.bilinear import Bilinear
from shared.nn.permutation import bilinear_mlp_spec, mlp_spec


class MLP(nn.Module):
    def __init__(self, d_input, d_hidden, n_hidden, n_classes):
        super().__init__()
        sizes = [d_input] + [d_hidden] * n_hidden + [n_classes]
        self.fc = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))
        self.act = nn.ModuleList(nn.ReLU() for _ in range(n_hidden))

    def forward(self, x):
        for fc, act in zip(self.fc, self.act):
            x = act(fc(x))
        return self.fc[-1](x)

    def spec(self):
        return mlp_spec([f"fc.{i}" for i in range(len(self.fc))])

    def activation_modules(self):
        """{permutation name: module whose output is that hidden layer's post-ReLU activation}."""
        return {f"P{i}": f"act.{i}" for i in range(len(self.act))}


class BilinearMLP(nn.Module):
    def __init__(self, d_input, d_hidden, n_hidden, n_classes):
        super().__init__()
        sizes = [d_input] + [d_hidden] * n_hidden
        self.hidden = nn.ModuleList(Bilinear(a, b, bias=False) for a, b in zip(sizes[:-1], sizes[1:]))
        self.out = nn.Linear(d_hidden, n_classes)

    def forward(self, x):
        for layer in self.hidden:
            x = layer(x)
        return self.out(x)

    def spec(self):
        return bilinear_mlp_spec([f"hidden.{i}" for i in range(len(self.hidden))], "out")

    def activation_modules(self):
        return {f"P{i}": f"hidden.{i}" for i in range(len(self.hidden))}


KINDS = {"relu": MLP, "bilinear": BilinearMLP}


def build(spec):
    """A model from a run spec; the caller seeds torch first, so init depends on the run's seed only."""
    return KINDS[spec.get("kind", "relu")](spec["d_input"], spec["d_hidden"], spec["n_hidden"], spec["n_classes"])
