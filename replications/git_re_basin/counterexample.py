"""The counterexample of App. A.6 (dossier 2.5): two hand-set 2-2-2-1 ReLU nets that both classify
y = 1[x1 <= 0 and x2 >= 0] on x ~ U([-1, 1]^2), but test the two conditions in opposite order, so that no
permutation of B's hidden units linearly connects it to A.

  A: layer 1 passes x2 through (unit 0: relu(x2 + 1)) and measures the violation of the first condition
     (unit 1: relu(k x1)); layer 2 (unit 0) is relu(x2 - k relu(x1)), positive iff x2 > 0 and x1 <= 0 (up to a
     strip of width 1/k), unit 1 is dead (zero weights); the output is unit 0 minus a threshold t.
  B: the same with the roles swapped: layer 1 passes -x1 (relu(1 - x1)) and measures the violation of the second
     condition (relu(-k x2)); layer 2 is relu(-x1 - k relu(-x2)).
The output is a single logit (class 1 iff logit > 0). Hidden layers are permutations P0 and P1 of size 2 each, so
B has four hidden-unit relabellings. The sharpness k and threshold t are config values.
"""
import itertools

import torch
from torch import nn

from shared.nn.interpolation import interpolate
from shared.nn.permutation import apply_permutation, mlp_spec

SPEC = mlp_spec(["fc.0", "fc.1", "fc.2"])


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2), nn.Linear(2, 1)])

    def forward(self, x):
        x = torch.relu(self.fc[0](x))
        x = torch.relu(self.fc[1](x))
        return self.fc[2](x).squeeze(-1)


def solutions(k, t):
    """(state_a, state_b): the two hand-set perfect solutions, float64."""
    d = lambda *rows: torch.tensor(rows, dtype=torch.float64)
    a = {"fc.0.weight": d([0.0, 1.0], [k, 0.0]), "fc.0.bias": d(1.0, 0.0),
         "fc.1.weight": d([1.0, -k], [0.0, 0.0]), "fc.1.bias": d(-1.0, 0.0),
         "fc.2.weight": d([1.0, 0.0]), "fc.2.bias": d(-t)}
    b = {"fc.0.weight": d([-1.0, 0.0], [0.0, -k]), "fc.0.bias": d(1.0, 0.0),
         "fc.1.weight": d([1.0, -k], [0.0, 0.0]), "fc.1.bias": d(-1.0, 0.0),
         "fc.2.weight": d([1.0, 0.0]), "fc.2.bias": d(-t)}
    return a, b


def sample(n, seed):
    """n points uniform on [-1, 1]^2 (float64) and their labels."""
    x = torch.rand(n, 2, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) * 2 - 1
    return x, ((x[:, 0] <= 0) & (x[:, 1] >= 0)).long()


def all_permutations():
    """The four relabellings {P0, P1} of B's hidden units."""
    pairs = [torch.tensor(p) for p in itertools.permutations(range(2))]
    return [{"P0": p0, "P1": p1} for p0, p1 in itertools.product(pairs, pairs)]


def accuracy_curves(k, t, n, seed, lams):
    """{label: [accuracy along (1 - lam) A + lam pi(B)]} for each of the four pi, on one fixed sample."""
    a, b = solutions(k, t)
    x, y = sample(n, seed)
    net = Net().double()
    curves = {}
    for perm in all_permutations():
        pb = apply_permutation(SPEC, perm, b)
        label = "P0=" + "".join(map(str, perm["P0"].tolist())) + " P1=" + "".join(map(str, perm["P1"].tolist()))
        row = []
        with torch.no_grad():
            for lam in lams:
                net.load_state_dict(interpolate(a, pb, float(lam)))
                row.append(float(((net(x) > 0).long() == y).double().mean()))
        curves[label] = row
    return curves
